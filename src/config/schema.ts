/**
 * The one schema of `proxy.config.json`: the TypeScript type, the validation and
 * config/proxy.config.schema.json come from here; every default from ./defaults.ts. `stdio` given
 * its one upstream by flags builds its config without loading this module (./flagConfig.ts).
 */
import { startsWithTilde, TILDE_NOT_EXPANDED } from "./homeTilde.js";
import { isHeaderName, isHeaderValue, NOT_A_HEADER_NAME, NOT_A_HEADER_VALUE } from "./headerValue.js";
import { isSpawnValue, NOT_A_SPAWN_VALUE } from "./spawnValue.js";
import { hasUrlCredentials, URL_CREDENTIALS } from "./urlCredentials.js";
import { z } from "zod";
import { isListenHost, NOT_A_LISTEN_HOST } from "./listenHost.js";
import { isPlainHttpBeyondLoopback, PLAIN_HTTP_OAUTH } from "./loopback.js";
import { IMAGE_FORMATS, MIN_RESULT_BYTES } from "../fit/settings.js";
import {
  DEFAULT_FIT,
  DEFAULT_HOST,
  DEFAULT_IMAGES,
  DEFAULT_LIMITS,
  DEFAULT_LOG_LEVEL,
  DEFAULT_NORMALIZE,
  DEFAULT_PORT,
} from "./defaults.js";
import { serverNameProblem } from "./serverName.js";

/** The smallest buffer limit accepted: Node's own stream high-water mark (16 KiB). */
const MIN_BUFFER_BYTES = 16 * 1024;

/** "(default X)" for a key's help text, X as it is written in the config file. */
function byDefault(value: unknown): string {
  return `(default ${JSON.stringify(value)})`;
}

const NO_TILDE = `${TILDE_NOT_EXPANDED} (no shell reads the config): give the full path`;

/** The engine's keys of `normalize` (the fit layer's are fitSettings()). */
export const engineSettings = {
  unwrapBlobs: z
    .boolean()
    .optional()
    .describe(`blob whose bytes are UTF-8 text → text ${byDefault(DEFAULT_NORMALIZE.unwrapBlobs)}`),
  transcode: z
    .boolean()
    .optional()
    .describe(`BOM-marked or declared non-UTF-8 charset → decoded text ${byDefault(DEFAULT_NORMALIZE.transcode)}`),
  reencodeBinaryText: z
    .boolean()
    .optional()
    .describe(`binary strings and surrogate-escaped text → blob ${byDefault(DEFAULT_NORMALIZE.reencodeBinaryText)}`),
  fixMime: z
    .boolean()
    .optional()
    .describe(`missing, generic or contradicted mimeType → corrected ${byDefault(DEFAULT_NORMALIZE.fixMime)}`),
  media: z
    .boolean()
    .optional()
    .describe(`image/audio blocks get the mimeType their bytes' signature says ${byDefault(DEFAULT_NORMALIZE.media)}`),
  detectCharset: z
    .boolean()
    .optional()
    .describe(
      `textual bytes with no charset that are not UTF-8: detect the charset and transcode when confident ` +
        `${byDefault(DEFAULT_NORMALIZE.detectCharset)}`,
    ),
  charset: z
    .enum(["transcode", "preserve"])
    .optional()
    .describe(
      `"preserve": textual bytes in a non-UTF-8 charset stay a blob labelled ;charset=X ` +
        `${byDefault(DEFAULT_NORMALIZE.charset)}`,
    ),
  maxNormalizeBytes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("entries whose text/blob string is longer than this many UTF-8 bytes pass untouched"),
  extraTextualTypes: z
    .array(z.string().regex(/^[^/\s;]+\/[^/\s;]+$/, "a type/subtype essence"))
    .optional()
    .describe(
      `essences treated as textual on top of the built-in list ${byDefault(DEFAULT_NORMALIZE.extraTextualTypes)}`,
    ),
  dryRun: z
    .boolean()
    .optional()
    .describe(`log what would change, forward the original ${byDefault(DEFAULT_NORMALIZE.dryRun)}`),
};

const normalizeSettings = { ...engineSettings, ...fitSettings() };

/** Fitting results to the host (images, embedded resources, long tool results): every key off unless set. */
export function fitSettings() {
  return {
    images: z
      .union([
        z.boolean(),
        z.strictObject({
          maxDimension: z
            .number()
            .int()
            .min(16)
            .optional()
            .describe(`longest side in pixels (default ${DEFAULT_IMAGES.maxDimension})`),
          maxBytes: z
            .number()
            .int()
            .min(1024)
            .optional()
            .describe(`bytes of one image after fitting (default ${DEFAULT_IMAGES.maxBytes})`),
          formats: z
            .array(z.enum(IMAGE_FORMATS))
            .min(1)
            .optional()
            .describe(`formats the host accepts (default ${DEFAULT_IMAGES.formats.join(", ")})`),
          resources: z
            .boolean()
            .optional()
            .describe(`also fit image/* blobs of resources/read results ${byDefault(DEFAULT_IMAGES.resources)}`),
        }),
      ])
      .optional()
      .describe(
        `fit images in tool results, prompt messages and embedded resources: true (defaults), false (off), or limits ` +
          `${byDefault(DEFAULT_FIT.images)}`,
      ),
    embeddedResources: z
      .enum(["keep", "inline"])
      .optional()
      .describe(
        `"inline": embedded text resources become text blocks, image blobs image blocks ` +
          `${byDefault(DEFAULT_FIT.embeddedResources)}`,
      ),
    maxResultBytes: z
      .union([z.number().int().min(MIN_RESULT_BYTES), z.literal(false)])
      .optional()
      .describe(
        `tool result text over this many UTF-8 bytes is cut; the rest is served as pages linked from the result; ` +
          `false: off ${byDefault(DEFAULT_FIT.maxResultBytes)}`,
      ),
  };
}

/** Keys a rule with a `tool` condition may set: only the fit layer knows the tool. */
const TOOL_RULE_KEYS: ReadonlySet<string> = new Set(["images", "embeddedResources", "maxResultBytes"]);

export const NormalizeSchema = z
  .strictObject({
    ...normalizeSettings,
    rules: z
      .array(
        z
          .strictObject({
            uri: z.string().optional().describe("glob over the URI: * within a segment, ** across"),
            mimeType: z.string().optional().describe("an essence (text/markdown) or a wildcard (image/*)"),
            tool: z
              .string()
              .min(1)
              .optional()
              .describe(
                "glob over the tool name (tools/call results); such a rule may set only images, embeddedResources, " +
                  "maxResultBytes",
              ),
            set: z.strictObject(normalizeSettings),
          })
          .superRefine((rule, ctx) => {
            if (rule.tool === undefined) return;
            for (const key of Object.keys(rule.set)) {
              if (!TOOL_RULE_KEYS.has(key))
                ctx.addIssue({
                  code: "custom",
                  path: ["set", key],
                  message:
                    `a rule with "tool" may set only images, embeddedResources and maxResultBytes (the engine ` +
                    `does not know tools); put "${key}" in a rule without "tool"`,
                });
            }
          }),
      )
      .optional()
      .describe("per-URI / per-type overrides; later rules win"),
  })
  .describe("normalization policy");

const common = {
  normalize: NormalizeSchema.optional(),
  /** Desktop hosts put these in `mcpServers` entries; accepted so a block can be pasted as is. */
  disabled: z.boolean().optional(),
};

/** A command-line or environment string a process can be started with (spawnValue.ts). */
const SpawnValueSchema = z.string().refine(isSpawnValue, NOT_A_SPAWN_VALUE);

export const StdioServerSchema = z.looseObject({
  type: z.literal("stdio").optional(),
  command: z.string().min(1).refine(isSpawnValue, NOT_A_SPAWN_VALUE),
  args: z.array(SpawnValueSchema).optional(),
  env: z.record(SpawnValueSchema, SpawnValueSchema).optional(),
  cwd: z.string().optional(),
  inheritEnv: z
    .boolean()
    .optional()
    .describe(
      "serve: the child gets the proxy's whole environment (minus the variables the listener's and the servers' auth " +
        "read) instead of HOME, LOGNAME, PATH, SHELL, TERM, USER; env is added either way",
    ),
  ...common,
});

const scopes = z
  .array(z.string().min(1))
  .optional()
  .describe("scopes to ask for (default: what the server's 401 or metadata advertises)");

const ISSUER_NEEDED =
  "a clientSecret is presented only to the authorization server that issued it: name that server's issuer URL " +
  "here (else the MCP server could name another and receive the secret)";
const ISSUER_DESCRIPTION =
  "the authorization server that issued clientId (its issuer URL): the client and its secret are presented to no " +
  "other, whatever authorization server the MCP server names (needed with a clientSecret)";
const requiredIssuer = z
  .url({ protocol: /^https?$/, error: (issue) => (issue.input === undefined ? ISSUER_NEEDED : undefined) })
  .describe(ISSUER_DESCRIPTION);
const issuer = requiredIssuer.optional().describe(ISSUER_DESCRIPTION);
const allowHttp = z
  .boolean()
  .optional()
  .describe(
    "explicit opt-out: OAuth over plain http to a host that is not loopback (tokens and secrets in clear; a network " +
      "you trust)",
  );

/** OAuth to a remote upstream: the browser flow (code + PKCE), or client credentials for sidecars. */
export const UpstreamAuthSchema = z
  .union([
    z.literal("oauth").describe("authorization code + PKCE; the client is registered dynamically"),
    z
      .strictObject({
        grant: z.literal("client_credentials"),
        clientId: z.string().min(1),
        clientSecret: z.string().min(1),
        issuer: requiredIssuer,
        scopes,
        allowHttp,
      })
      .describe("machine to machine: a token from the token endpoint, no browser"),
    z
      .strictObject({
        grant: z.literal("authorization_code").optional(),
        clientId: z
          .string()
          .min(1)
          .optional()
          .describe("a pre-registered client (default: the proxy registers itself)"),
        clientSecret: z.string().min(1).optional(),
        issuer,
        scopes,
        callbackPort: z
          .number()
          .int()
          .min(1)
          .max(65535)
          .optional()
          .describe("port of the http://127.0.0.1:PORT/callback redirect (default: a free port)"),
        allowHttp,
      })
      .describe("authorization code + PKCE, with a pre-registered client, scopes or a callback port"),
  ])
  .describe(
    '"oauth", {clientId?, clientSecret?, issuer?, scopes?, callbackPort?, allowHttp?} or {grant: ' +
      '"client_credentials", clientId, clientSecret, issuer, scopes?, allowHttp?}',
  );

/** The longest delay Node's timers keep (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;
const TIMER_TOO_LONG = "at most 2147483647 ms (about 24.8 days): a longer timer would fire at once";

/** A header value HTTP can carry (headerValue.ts). */
const HeaderValueSchema = z.string().refine(isHeaderValue, NOT_A_HEADER_VALUE);

export const RemoteServerSchema = z
  .looseObject({
    type: z.enum(["http", "streamable-http", "sse", "ws", "websocket"]).optional(),
    // Letters of either case spelled out: the JSON Schema's pattern has no flags to carry an `i`.
    // `${…}` at the start: a file checked against the schema before its variables are read (an
    // editor), or a disabled server's URL, whose variables are never read.
    url: z
      .string()
      .regex(/^(([hH][tT][tT][pP][sS]?|[wW][sS][sS]?):\/\/|\$\{)/, "an http(s):// or ws(s):// URL")
      .refine((url) => !hasUrlCredentials(url), URL_CREDENTIALS),
    transport: z.enum(["streamable-http", "sse", "websocket"]).optional(),
    headers: z.record(z.string().refine(isHeaderName, NOT_A_HEADER_NAME), HeaderValueSchema).optional(),
    auth: UpstreamAuthSchema.optional(),
    ...common,
  })
  .superRefine((server, ctx) => {
    // A disabled server is never reached: its URL may hold variables left as written.
    if (server.disabled !== true && (server.url.startsWith("${") || !URL.canParse(server.url)))
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: server.url.startsWith("${")
          ? "an http(s):// or ws(s):// URL"
          : "not a valid URL (a space, a bad port or an unclosed [ in it?)",
      });
    if (server.auth === undefined) return;
    if (
      /^wss?:/i.test(server.url) ||
      server.transport === "websocket" ||
      server.type === "ws" ||
      server.type === "websocket"
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["auth"],
        message: "OAuth works with http(s) upstreams (streamable-http, sse), not WebSocket",
      });
    }
    const plainHttpAllowed = typeof server.auth === "object" && server.auth.allowHttp === true;
    if (!plainHttpAllowed && server.disabled !== true && isPlainHttpBeyondLoopback(server.url))
      ctx.addIssue({ code: "custom", path: ["url"], message: `with "auth", this URL ${PLAIN_HTTP_OAUTH}` });
    if (typeof server.auth === "object" && !plainHttpAllowed && isPlainHttpBeyondLoopback(server.auth.issuer ?? ""))
      ctx.addIssue({ code: "custom", path: ["auth", "issuer"], message: PLAIN_HTTP_OAUTH });
    if (typeof server.auth === "object" && server.auth.clientSecret !== undefined && server.auth.issuer === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["auth", "issuer"],
        message: ISSUER_NEEDED,
      });
    if (typeof server.auth === "object" && server.auth.grant !== "client_credentials") {
      if (server.auth.clientSecret !== undefined && server.auth.clientId === undefined)
        ctx.addIssue({
          code: "custom",
          path: ["auth", "clientSecret"],
          message: "a clientSecret needs its clientId (without a clientId the proxy registers itself as a client)",
        });
    }
    if (Object.keys(server.headers ?? {}).some((name) => name.toLowerCase() === "authorization")) {
      ctx.addIssue({
        code: "custom",
        path: ["headers"],
        message:
          'an "Authorization" header and "auth" together: the OAuth token is the Authorization header; remove one',
      });
    }
  });

export const ServerSchema = z.union([StdioServerSchema, RemoteServerSchema]).superRefine((server, ctx) => {
  // Either kind accepts the other's key as unknown: with both, one would be dropped without a word.
  if (typeof server === "object" && server !== null && "command" in server && "url" in server)
    ctx.addIssue({
      code: "custom",
      message: 'has both "command" (stdio) and "url": a server is one or the other; remove one',
    });
});

export const ConfigSchema = z
  .strictObject({
    $schema: z.string().optional(),
    listen: z
      .strictObject({
        host: z.string().refine(isListenHost, NOT_A_LISTEN_HOST).default(DEFAULT_HOST),
        port: z.number().int().min(0).max(65535).default(DEFAULT_PORT),
      })
      .default({ host: DEFAULT_HOST, port: DEFAULT_PORT }),
    mcpServers: z
      .record(
        z.string().superRefine((name, ctx) => {
          const problem = serverNameProblem(name);
          if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
        }),
        ServerSchema,
      )
      .refine((servers) => Object.keys(servers).length > 0, "at least one server is required"),
    normalize: NormalizeSchema.optional(),
    log: z
      .strictObject({
        file: z
          .string()
          .refine((file) => !startsWithTilde(file), NO_TILDE)
          .optional()
          .describe(
            "JSONL file for the normalization records (operational lines stay on stderr); relative to the config " +
              "file's folder",
          ),
        level: z.enum(["debug", "info", "warn", "error", "silent"]).default(DEFAULT_LOG_LEVEL),
      })
      .default({ level: DEFAULT_LOG_LEVEL }),
    auth: z
      .strictObject({
        bearerTokens: z.array(z.string().min(1)).optional(),
        allowUnauthenticated: z
          .boolean()
          .optional()
          .describe("explicit opt-out: listen on a non-loopback address without tokens"),
      })
      .optional(),
    allowedOrigins: z.array(z.string()).optional(),
    allowedHosts: z.array(z.string()).optional(),
    limits: z
      .strictObject({
        maxMessageBytes: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxMessageBytes)
          .describe(
            "largest JSON-RPC message (stdio line, WebSocket frame, SSE event) and HTTP body, in bytes; over it: a " +
              "JSON-RPC error, the session goes on",
          ),
        maxBodyBytes: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            "largest HTTP request body (one message or a batch) on /mcp and /messages, in bytes (default: " +
              "maxMessageBytes)",
          ),
        bodyBytesInFlight: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.bodyBytesInFlight)
          .describe(
            "HTTP request bodies (and WebSocket messages not yet whole) held in memory at once over every " +
              "connection, in bytes; a POST that would take them past it gets 503 (retry) and is read no further, " +
              "a WebSocket host is closed with 1013 (try again later), so clients uploading at once cannot run the " +
              "proxy out of memory; never less than maxBodyBytes",
          ),
        maxNormalizeBytes: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxNormalizeBytes)
          .describe(
            "entries whose text/blob string is longer than this many UTF-8 bytes pass untouched (normalization size " +
              "threshold)",
          ),
        charsetDetectionBytes: z
          .number()
          .int()
          .nonnegative()
          .default(DEFAULT_LIMITS.charsetDetectionBytes)
          .describe(
            "bytes charset detection reads over one message's entries, in all (each guess reads up to 8 KiB of " +
              "an entry); entries past it keep their bytes and get a skip-detection-budget record, so a result of " +
              "thousands of legacy-charset entries cannot hold the proxy's thread for seconds; 0 turns detection off",
          ),
        requestTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.requestTimeoutMs)
          .describe(
            "a host request the upstream has not answered in this time gets a JSON-RPC error; a streamable HTTP " +
              "server's POST of a notification not acknowledged in this time is ended",
          ),
        initializeTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.initializeTimeoutMs)
          .describe(
            "an upstream that has not answered a session's first initialize in this time failed to start: the " +
              "host gets a JSON-RPC error, the session ends, the server is down on /healthz (a stdio server's next " +
              "start backs off)",
          ),
        upstreamAckTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .min(0)
          .default(DEFAULT_LIMITS.upstreamAckTimeoutMs)
          .describe(
            "streamable HTTP servers: what a host sent after a notification goes out once the server has " +
              "acknowledged it (202), or after this long without (logged); 0 sends it at once",
          ),
        upstreamStreamWaitMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .min(0)
          .default(DEFAULT_LIMITS.upstreamStreamWaitMs)
          .describe(
            "streamable HTTP servers: notifications/initialized goes once the server has answered the session's " +
              "GET stream, opened just before it, or after this long without (logged); 0 sends it at once",
          ),
        upstreamIdleConnections: z
          .number()
          .int()
          .min(0)
          .default(DEFAULT_LIMITS.upstreamIdleConnections)
          .describe(
            "streamable HTTP servers: idle keep-alive connections kept open to each server, shared by every " +
              "session to it; a connection freed beyond this many is closed",
          ),
        connectTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.connectTimeoutMs)
          .describe(
            "HTTP, SSE and WebSocket upstreams: how long connecting may take (the start-up probe, the SSE stream's " +
              "first answer, the WebSocket handshake), and closing (the session DELETE, the close handshake), in ms",
          ),
        killGraceMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.killGraceMs)
          .describe(
            "stdio upstreams: how long a child (and what it started) has to exit after SIGTERM before SIGKILL, in ms",
          ),
        stderrLinesLogged: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.stderrLinesLogged)
          .describe(
            "stdio upstreams: lines of one upstream's stderr logged per 10 s; past them lines are counted, and the " +
              "count logged with the next line logged",
          ),
        maxSessions: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxSessions)
          .describe("live host sessions of every kind together; the next gets 503"),
        maxSessionsPerClient: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxSessionsPerClient)
          .describe(
            "live host sessions one client address may hold (every loopback address is one client); " +
              "the next gets 503",
          ),
        shutdownGraceMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .min(0)
          .default(DEFAULT_LIMITS.shutdownGraceMs)
          .describe(
            "serve: after SIGTERM/SIGINT, how long in-flight requests may take before sessions are ended " +
              "(stdio stops at once)",
          ),
        restartBackoffMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .min(0)
          .default(DEFAULT_LIMITS.restartBackoffMs)
          .describe("after an upstream dies, the wait before the next one starts; doubles per consecutive failure"),
        maxRestartBackoffMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .min(0)
          .default(DEFAULT_LIMITS.maxRestartBackoffMs)
          .describe("cap of restartBackoffMs's doubling"),
        statelessPoolSize: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.statelessPoolSize)
          .describe(
            "stateless requests (protocol 2026-07-28: no session) are served by up to this many started upstreams " +
              "per server and bearer token, reused; one with nothing in flight for sessionIdleMs is ended",
          ),
        statelessHoldMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .min(0)
          .default(DEFAULT_LIMITS.statelessHoldMs)
          .describe(
            "longest a pooled upstream (which serves other clients too) is not read because one stateless " +
              "host is behind on what was sent to it (hostBufferBytes); then the upstream is read again and " +
              "that POST gets no more notifications, only its answers. 0: never held",
          ),
        maxUpstreamRequests: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxUpstreamRequests)
          .describe(
            "requests of an upstream waiting at once for its host's answer (sampling, elicitation, roots/list), " +
              "per session (and per pooled upstream of stateless hosts); one more is answered -32000 at once, not " +
              "forwarded, so a server asking without end cannot grow the proxy",
          ),
        maxHostRequests: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxHostRequests)
          .describe(
            "requests of a host waiting at once for its upstream's answer, per session; one more is answered " +
              "-32000 at once, not forwarded, so a host asking without end of an upstream that never answers " +
              "cannot grow the proxy",
          ),
        maxBatch: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxBatch)
          .describe(
            "most messages in one JSON-RPC batch from a host; a bigger batch is refused whole (413 over HTTP, -32600 " +
              "naming the limit) and nothing of it is forwarded",
          ),
        maxUpstreamMessageNodes: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxUpstreamMessageNodes)
          .describe(
            "most nodes (as maxMessageNodes counts them) in one message from an upstream, counted before it is " +
              "parsed: one over it is not parsed, and the request it answers gets -32003 naming the limit, so a " +
              "server's answer that is costly to parse cannot hold every session for seconds",
          ),
        maxSkippedMessageBytes: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxSkippedMessageBytes)
          .describe(
            "bytes an upstream's message over maxMessageBytes (a stdio line, an SSE event) may run on past that " +
              "limit, dropped as it is read, before its stream is cut: one that ends first is answered -32003 and " +
              "reading goes on; one still running is reported by its start and its stream (a stdio upstream: the " +
              "upstream) ended, so a message without end cannot hold a core for as long as it is sent",
          ),
        maxPendingPongs: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxPendingPongs)
          .describe(
            "answers to a WebSocket upstream's pings waiting at once to be written (its socket not taking them): " +
              "one more ping ends that upstream, saying it flooded pings",
          ),
        maxMessageNodes: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxMessageNodes)
          .describe(
            "most nodes (objects, arrays, and members or elements after the first in one) in one message (or " +
              "batch) a host sends serve over /mcp, /messages or /ws, counted before it is parsed: one over it is " +
              "refused (413 over HTTP, -32003 over WebSocket, naming the limit), so a message that is costly to " +
              "parse cannot hold the proxy for seconds",
          ),
        sessionIdleMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.sessionIdleMs)
          .describe(
            "a streamable HTTP session with no request (none waiting either) and no open stream (read or not) for " +
              "this long is ended (its upstream too); the host's next request gets 404 and it initializes again",
          ),
        pingIntervalMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .min(0)
          .default(DEFAULT_LIMITS.pingIntervalMs)
          .describe(
            "WebSocket hosts are pinged this often; one that has not answered (pong, any frame, or taking what was " +
              "queued for it) by the next ping is dropped (half-open connections); not judged while the proxy is not " +
              "reading it (its upstream is behind); 0 turns it off",
          ),
        sseKeepAliveMs: z
          .union([z.literal(0), z.number().int().min(100).max(MAX_TIMER_MS, TIMER_TOO_LONG)], {
            error: "expects 0 (off) or a whole number of ms, at least 100",
          })
          .default(DEFAULT_LIMITS.sseKeepAliveMs)
          .describe(
            "an SSE stream to a host (GET /sse, the streamable HTTP streams) gets a keep-alive comment this often, " +
              "so load balancers and proxies in between do not close it while idle; 0 turns them off. Below 500 it " +
              "also shortens how long a streamable HTTP answer may take and still be sent as plain JSON",
          ),
        maxQueuedMessages: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxQueuedMessages)
          .describe(
            "server messages (notifications, requests) kept for a streamable HTTP session while its host has no " +
              "GET stream open, delivered when it opens one; past it the oldest notification is dropped (the " +
              "oldest request when only requests are queued), logged",
          ),
        maxQueuedBytes: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxQueuedBytes)
          .describe(
            "bytes of the server messages kept for a streamable HTTP session while its host has no GET stream " +
              "open (what their text holds in memory); past it the oldest go as past maxQueuedMessages, but the " +
              "newest is always kept",
          ),
        sseReplayBytes: z
          .number()
          .int()
          .nonnegative()
          .default(DEFAULT_LIMITS.sseReplayBytes)
          .describe(
            "bytes of the events sent on a streamable HTTP session's SSE streams it keeps, so a host whose stream " +
              "drops can resume it with Last-Event-ID and get what it missed, answers still to come included " +
              "(each event counts its characters and 512 bytes for what holds it); " +
              "past it the oldest go first, and a message larger than it is not kept (logged when a resume or a " +
              "dropped stream misses it); 0 turns resumption off (no event ids)",
          ),
        closeTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.closeTimeoutMs)
          .describe(
            "a WebSocket host that has not answered the proxy's close frame (session end, shutdown) in this time " +
              "has its connection cut, so a frozen host cannot hold a shutdown; so does a refused request still " +
              "sending its body; in stdio, how long the host's " +
              "first requests are still answered (with why) after an upstream that ended as it started, and how " +
              "long its last answers wait at exit for a host slow to read them",
          ),
        headersTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.headersTimeoutMs)
          .describe(
            "a connection that has not sent its whole request header in this time is closed (408); no more than " +
              "requestBodyTimeoutMs",
          ),
        requestBodyTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.requestBodyTimeoutMs)
          .describe("a request whose headers and body have not all arrived in this time is closed (408)"),
        keepAliveTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.keepAliveTimeoutMs)
          .describe("an idle keep-alive HTTP connection is closed after this"),
        maxConnections: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxConnections)
          .describe(
            "open HTTP connections at once (SSE and WebSocket streams, keep-alive, requests); more are closed as " +
              "they arrive",
          ),
        maxConnectionsPerClient: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            "open HTTP connections from one client address (every loopback address is one client; default: half of " +
              "maxConnections, at least 16); more from it are closed as they arrive, so one client, with or " +
              "without a token, cannot take every connection",
          ),
        hostBufferBytes: z
          .number()
          .int()
          .min(MIN_BUFFER_BYTES)
          .default(DEFAULT_LIMITS.hostBufferBytes)
          .describe(
            "bytes sent to one host connection (WebSocket, SSE stream, HTTP responses, the stdout of stdio mode) " +
              "that it has not read yet; above it the proxy stops reading that session's upstream until the host has " +
              "taken them. Nothing is dropped",
          ),
        upstreamBufferBytes: z
          .number()
          .int()
          .min(MIN_BUFFER_BYTES)
          .default(DEFAULT_LIMITS.upstreamBufferBytes)
          .describe(
            "bytes sent to one upstream (a child's stdin, a WebSocket, HTTP POSTs not yet answered) that it has not " +
              "taken yet; above it the proxy stops reading that session's host until the upstream has taken them",
          ),
        rawStringBytes: z
          .number()
          .int()
          .min(0)
          .default(DEFAULT_LIMITS.rawStringBytes)
          .describe(
            "blob/text/data strings at least this many bytes long in an upstream's stdio lines, streamable HTTP JSON " +
              "bodies and WebSocket messages are read, normalized and written as bytes, never as JS strings (big " +
              "reads: less CPU and memory); 0 turns it off",
          ),
        loginTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.loginTimeoutMs)
          .describe(
            "an OAuth browser login (login, or stdio without a usable token) that gets no redirect back in this time " +
              "fails",
          ),
        oauthRequestTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.oauthRequestTimeoutMs)
          .describe(
            "one request to an OAuth authorization server or metadata URL (discovery, registration, token, refresh)",
          ),
        imageMaxPixels: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.imageMaxPixels)
          .describe(
            "images declaring more pixels (width × height) are not decoded: sent as they are, with a warning record",
          ),
        fitTimeoutMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.fitTimeoutMs)
          .describe(
            "a result waits at most this long for its images to be fitted; then they go as they were, with a warning " +
              "record",
          ),
        fitHeldBytes: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.fitHeldBytes)
          .describe(
            "in-process use over a transport that cannot stop reading (the SDK's own): bytes of messages held behind " +
              "a result whose images are fitted; past it, that result goes on as it came and they follow",
          ),
        fitConcurrency: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.fitConcurrency)
          .describe(
            "images decoded and encoded at the same time, over all sessions (each holds a decoded image in memory)",
          ),
        spillTtlMs: z
          .number()
          .int()
          .max(MAX_TIMER_MS, TIMER_TOO_LONG)
          .positive()
          .default(DEFAULT_LIMITS.spillTtlMs)
          .describe("pages of a cut tool result (maxResultBytes) can be read for this long"),
        spillMaxBytes: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.spillMaxBytes)
          .describe(
            "memory the pages of cut tool results may take, over all sessions; a result that does not fit goes out " +
              "whole, with a warning record",
          ),
        maxTrackedTasks: z
          .number()
          .int()
          .positive()
          .default(DEFAULT_LIMITS.maxTrackedTasks)
          .describe(
            "task ids remembered per upstream connection so a task's tasks/result is normalized as the request that " +
              "created it; past it the least recently used is forgotten (its result passes unchanged)",
          ),
      })
      // Node refuses a header timeout longer than the whole request's.
      .refine((limits) => limits.headersTimeoutMs <= limits.requestBodyTimeoutMs, {
        message: "must be no more than limits.requestBodyTimeoutMs",
        path: ["headersTimeoutMs"],
      })
      .default({ ...DEFAULT_LIMITS }),
  })
  .describe("mcp-normalizer proxy configuration");

export type ProxyConfig = z.output<typeof ConfigSchema>;
export type ServerConfig = z.output<typeof ServerSchema>;
export type StdioServerConfig = z.output<typeof StdioServerSchema>;
export type UpstreamAuthConfig = z.output<typeof UpstreamAuthSchema>;
export type NormalizeConfig = z.output<typeof NormalizeSchema>;

export { isStdioServer } from "./serverKind.js";

/** The JSON Schema checked in at config/proxy.config.schema.json (a test fails if it is stale). */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
}
