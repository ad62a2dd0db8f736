/**
 * The paths a host can take to the benchmark upstream: directly over stdio,
 * through mcp-normalizer on each of its transports, through supergateway and through mcp-proxy.
 * Each `start()` brings up a fresh proxy (and upstream), connects the SDK client and returns
 * {call, proxyPid, close}; `close()` always ends every process it started.
 */
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { connectHost } from "./hostClient.mjs";
import { freePort, startProxyProcess } from "./proxyProcess.mjs";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const NODE = process.execPath;
const UPSTREAM = join(ROOT, "bench", "upstream.mjs");
/** BENCH_MCPN_DIST runs another build's dist/ as mcpn-* (e.g. one built outside a shared working tree). */
const MCPN_CLI = join(process.env.BENCH_MCPN_DIST ?? join(ROOT, "dist"), "cli.js");
const SUPERGATEWAY = join(ROOT, "node_modules", "supergateway", "dist", "index.js");
const RELAY = join(ROOT, "bench", "relay.mjs");
const TRANSPORT_RELAY = join(ROOT, "bench", "transportRelay.mjs");
const MCP_PROXY = join(ROOT, "node_modules", "mcp-proxy", "dist", "bin", "mcp-proxy.mjs");

/**
 * The stdio host's read cap on big reads. The SDK's stdio client gives up on a message over
 * 10 MiB (STDIO_DEFAULT_MAX_BUFFER_SIZE); the direct baseline raises it, so the
 * big-read stdio paths do too and `direct-sdk-default` records what an unmodified host gets.
 */
export const HOST_STDIO_MAX_BUFFER_BYTES = 512 * 1024 * 1024;

/**
 * Extra Node flags for mcp-normalizer's own process, e.g. BENCH_MCPN_NODE_ARGS="--cpu-prof
 * --cpu-prof-dir=/tmp/prof" to profile it inside the benchmark (notes/bench.md "Profiling").
 */
export const MCPN_NODE_ARGS = (process.env.BENCH_MCPN_NODE_ARGS ?? "").split(/\s+/).filter((a) => a !== "");
/** The same for the peers' processes (supergateway, mcp-proxy), to profile them alike. */
const PEER_NODE_ARGS = (process.env.BENCH_PEER_NODE_ARGS ?? "").split(/\s+/).filter((a) => a !== "");

/** Shell-quotes one word for supergateway's `--stdio "CMD ARGS"` string. */
function shellWord(word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

async function viaStdio(command, args, ctx, { proxy, maxBufferSize }) {
  const host = await connectHost(
    { kind: "stdio", command, args, maxBufferSize },
    { connectTimeoutMs: ctx.startTimeoutMs },
  );
  return { call: host.call, proxyPid: proxy ? host.pid : null, diagnostics: host.stderrTail, close: host.close };
}

/** Starts an HTTP proxy, then connects the host to `urlOf(base)`; cleans up the proxy if the host cannot connect. */
async function viaHttpProxy(spec, kind, urlOf, ctx) {
  const proxy = await startProxyProcess({ ...spec, cwd: ROOT, timeoutMs: ctx.startTimeoutMs });
  try {
    const host = await connectHost({ kind, url: urlOf(proxy.match) }, { connectTimeoutMs: ctx.startTimeoutMs });
    return {
      call: host.call,
      proxyPid: proxy.pid,
      diagnostics: proxy.output,
      async close() {
        await host.close();
        await proxy.stop();
      },
    };
  } catch (error) {
    const output = proxy.output();
    await proxy.stop();
    throw new Error(`${error.message}${output === "" ? "" : ` (proxy output: ${output})`}`);
  }
}

/**
 * A second build of mcp-normalizer to compare against in the same interleaved run (A/B on a
 * shared machine): BENCH_BASELINE_DIST=/path/to/a/copy/of/dist adds the paths base-stdio,
 * base-mcp, base-sse and base-ws, which run that copy's cli.js exactly as mcpn-* run dist/.
 */
const BASELINE_CLI = process.env.BENCH_BASELINE_DIST ? join(process.env.BENCH_BASELINE_DIST, "cli.js") : undefined;

function mcpnServe(ctx, cli = MCPN_CLI) {
  return {
    command: NODE,
    args: [
      ...MCPN_NODE_ARGS,
      cli,
      "serve",
      "--name",
      "bench",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--",
      NODE,
      UPSTREAM,
      ...ctx.upstreamArgs,
    ],
    readyLine: /listening on (http:\/\/\S+)/,
  };
}

async function supergateway(outputTransport, extra, ctx) {
  const port = await freePort();
  const stdio = [NODE, UPSTREAM, ...ctx.upstreamArgs].map(shellWord).join(" ");
  // --logLevel none: at its default ("info") supergateway logs every message to stdout, which
  // would bill it for a terminal it does not have in production.
  return {
    command: NODE,
    args: [
      ...PEER_NODE_ARGS,
      SUPERGATEWAY,
      "--stdio",
      stdio,
      "--outputTransport",
      outputTransport,
      "--port",
      String(port),
      "--logLevel",
      "none",
      ...extra,
    ],
    probePort: port,
    match: port,
  };
}

async function mcpProxy(ctx) {
  const port = await freePort();
  return {
    command: NODE,
    args: [
      ...PEER_NODE_ARGS,
      MCP_PROXY,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--",
      NODE,
      UPSTREAM,
      ...ctx.upstreamArgs,
    ],
    probePort: port,
  };
}

/** ctx: {upstreamArgs, startTimeoutMs, big} — `big` marks a big-read workload (stdio hosts raise their cap). */
export const PATHS = [
  {
    id: "direct",
    product: "direct",
    kind: "stdio",
    label: "direct (SDK stdio client → upstream)",
    start: (ctx) =>
      viaStdio(NODE, [UPSTREAM, ...ctx.upstreamArgs], ctx, {
        proxy: false,
        maxBufferSize: ctx.big ? HOST_STDIO_MAX_BUFFER_BYTES : undefined,
      }),
  },
  {
    id: "direct-sdk-default",
    product: "direct",
    kind: "stdio",
    bigOnly: true,
    label: "direct, SDK stdio client with its default 10 MiB read cap",
    start: (ctx) => viaStdio(NODE, [UPSTREAM, ...ctx.upstreamArgs], ctx, { proxy: false, maxBufferSize: undefined }),
  },
  {
    id: "mcpn-stdio",
    product: "mcp-normalizer",
    kind: "stdio",
    label: "mcp-normalizer stdio",
    start: (ctx) =>
      viaStdio(NODE, [...MCPN_NODE_ARGS, MCPN_CLI, "stdio", "--", NODE, UPSTREAM, ...ctx.upstreamArgs], ctx, {
        proxy: true,
        maxBufferSize: ctx.big ? HOST_STDIO_MAX_BUFFER_BYTES : undefined,
      }),
  },
  {
    id: "relay-stdio",
    product: "reference",
    kind: "stdio",
    label: "reference: byte relay, no parsing (the floor of any stdio proxy)",
    start: (ctx) =>
      viaStdio(NODE, [RELAY, NODE, UPSTREAM, ...ctx.upstreamArgs], ctx, {
        proxy: true,
        maxBufferSize: ctx.big ? HOST_STDIO_MAX_BUFFER_BYTES : undefined,
      }),
  },
  ...[
    ["mcp", "streamable-http", "streamable HTTP"],
    ["sse", "sse", "SSE"],
    ["ws", "ws", "WebSocket"],
  ].map(([route, kind, name]) => ({
    id: `relay-${route}`,
    product: "reference",
    kind,
    label: `reference: ${name} → stdio byte relay, no parsing (the floor of any ${name} proxy)`,
    start: (ctx) =>
      viaHttpProxy(
        {
          command: NODE,
          args: [TRANSPORT_RELAY, "--", NODE, UPSTREAM, ...ctx.upstreamArgs],
          readyLine: /listening on (http:\/\/\S+)/,
        },
        kind,
        (base) => `${route === "ws" ? base.replace(/^http/, "ws") : base}/${route}`,
        ctx,
      ),
  })),
  {
    id: "mcpn-mcp",
    product: "mcp-normalizer",
    kind: "streamable-http",
    label: "mcp-normalizer /mcp",
    start: (ctx) => viaHttpProxy(mcpnServe(ctx), "streamable-http", (base) => `${base}/mcp/bench`, ctx),
  },
  {
    id: "mcpn-sse",
    product: "mcp-normalizer",
    kind: "sse",
    label: "mcp-normalizer /sse",
    start: (ctx) => viaHttpProxy(mcpnServe(ctx), "sse", (base) => `${base}/sse/bench`, ctx),
  },
  {
    id: "mcpn-ws",
    product: "mcp-normalizer",
    kind: "ws",
    label: "mcp-normalizer /ws",
    start: (ctx) => viaHttpProxy(mcpnServe(ctx), "ws", (base) => `${base.replace(/^http/, "ws")}/ws/bench`, ctx),
  },
  {
    id: "sg-mcp",
    product: "supergateway",
    kind: "streamable-http",
    label: "supergateway stdio→streamable HTTP (stateful)",
    start: async (ctx) =>
      viaHttpProxy(
        await supergateway("streamableHttp", ["--stateful"], ctx),
        "streamable-http",
        (port) => `http://127.0.0.1:${port}/mcp`,
        ctx,
      ),
  },
  {
    id: "sg-sse",
    product: "supergateway",
    kind: "sse",
    label: "supergateway stdio→SSE",
    start: async (ctx) =>
      viaHttpProxy(await supergateway("sse", [], ctx), "sse", (port) => `http://127.0.0.1:${port}/sse`, ctx),
  },
  {
    id: "sg-ws",
    product: "supergateway",
    kind: "ws",
    label: "supergateway stdio→WS",
    start: async (ctx) =>
      viaHttpProxy(await supergateway("ws", [], ctx), "ws", (port) => `ws://127.0.0.1:${port}/message`, ctx),
  },
  {
    id: "mcpp-mcp",
    product: "mcp-proxy",
    kind: "streamable-http",
    label: "mcp-proxy /mcp",
    start: async (ctx) =>
      viaHttpProxy(await mcpProxy(ctx), "streamable-http", (port) => `http://127.0.0.1:${port}/mcp`, ctx),
  },
  {
    id: "mcpp-sse",
    product: "mcp-proxy",
    kind: "sse",
    label: "mcp-proxy /sse",
    start: async (ctx) => viaHttpProxy(await mcpProxy(ctx), "sse", (port) => `http://127.0.0.1:${port}/sse`, ctx),
  },
];

if (BASELINE_CLI !== undefined) {
  const cli = BASELINE_CLI;
  PATHS.push(
    {
      id: "base-stdio",
      product: "baseline",
      kind: "stdio",
      label: "baseline build, stdio",
      start: (ctx) =>
        viaStdio(NODE, [...MCPN_NODE_ARGS, cli, "stdio", "--", NODE, UPSTREAM, ...ctx.upstreamArgs], ctx, {
          proxy: true,
          maxBufferSize: ctx.big ? HOST_STDIO_MAX_BUFFER_BYTES : undefined,
        }),
    },
    {
      id: "base-mcp",
      product: "baseline",
      kind: "streamable-http",
      label: "baseline build /mcp",
      start: (ctx) => viaHttpProxy(mcpnServe(ctx, cli), "streamable-http", (base) => `${base}/mcp/bench`, ctx),
    },
    {
      id: "base-sse",
      product: "baseline",
      kind: "sse",
      label: "baseline build /sse",
      start: (ctx) => viaHttpProxy(mcpnServe(ctx, cli), "sse", (base) => `${base}/sse/bench`, ctx),
    },
    {
      id: "base-ws",
      product: "baseline",
      kind: "ws",
      label: "baseline build /ws",
      start: (ctx) => viaHttpProxy(mcpnServe(ctx, cli), "ws", (base) => `${base.replace(/^http/, "ws")}/ws/bench`, ctx),
    },
  );
}

export const PEERS = new Set(["supergateway", "mcp-proxy"]);

/** The cli.js an mcp-normalizer path runs (`mcpn-*`: this build; `base-*`: BENCH_BASELINE_DIST's), or null. */
export function mcpnCliOf(pathId) {
  if (pathId.startsWith("mcpn-")) return MCPN_CLI;
  if (pathId.startsWith("base-")) return BASELINE_CLI ?? null;
  return null;
}

export function pathById(id) {
  const path = PATHS.find((p) => p.id === id);
  if (path === undefined) throw new Error(`bench: unknown path "${id}" (known: ${PATHS.map((p) => p.id).join(", ")})`);
  return path;
}
