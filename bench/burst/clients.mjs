#!/usr/bin/env node
/**
 * The burst workload's hosts: N SDK clients opened at once against one URL, each then making
 * READS sequential `resources/read` calls (sessions concurrent, each starting as soon as it is
 * connected). Prints one JSON line: latency quantiles of every read, of the first reads and of
 * the later ones, throughput (reads per second from the burst's start to the last answer), and
 * the errors (a read that fails or exceeds its timeout counts as one, never as a latency).
 *
 *   node bench/burst/clients.mjs --url URL --kind streamable-http|ws --sessions N --reads R [--uri U] [--timeout-ms MS]
 */
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { WebSocket } from "ws";
import { z } from "zod";
import { quantile, round } from "../suite/stats.mjs";

globalThis.WebSocket = WebSocket;
const AnyResult = z.looseObject({});

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    kind: { type: "string" },
    sessions: { type: "string" },
    reads: { type: "string" },
    uri: { type: "string" },
    "timeout-ms": { type: "string" },
  },
});
const sessions = Number(values.sessions ?? 100);
const reads = Number(values.reads ?? 20);
const uri = values.uri ?? "bench://text/1024";
const timeoutMs = Number(values["timeout-ms"] ?? 60_000);

function transportFor(url) {
  return values.kind === "ws"
    ? new WebSocketClientTransport(new URL(url))
    : new StreamableHTTPClientTransport(new URL(url));
}

/** An error's message with its cause's (fetch says only "fetch failed"; the cause says why). */
function why(error) {
  const cause = error?.cause;
  const causeText =
    cause === undefined ? "" : ` (${cause.code ?? ""}${cause.code && cause.message ? ": " : ""}${cause.message ?? ""})`;
  return `${String(error?.message ?? error)}${causeText}`.slice(0, 300);
}

const latencies = [];
const first = [];
const later = [];
const errors = [];
let lastEnd = 0;

async function session(i) {
  const client = new Client({ name: `burst-${i}`, version: "1.0.0" }, { capabilities: {} });
  try {
    await client.connect(transportFor(values.url), { timeout: timeoutMs });
  } catch (error) {
    errors.push(`session ${i} connect: ${why(error)}`);
    return;
  }
  for (let r = 0; r < reads; r++) {
    const t0 = performance.now();
    try {
      await client.request({ method: "resources/read", params: { uri } }, AnyResult, { timeout: timeoutMs });
      const ms = performance.now() - t0;
      latencies.push(ms);
      (r === 0 ? first : later).push(ms);
      lastEnd = Math.max(lastEnd, performance.now());
    } catch (error) {
      errors.push(`session ${i} read ${r + 1}: ${why(error)}`);
    }
  }
  await client.close().catch(() => {});
}

const start = performance.now();
await Promise.all(Array.from({ length: sessions }, (_, i) => session(i)));
const wallMs = lastEnd - start;
const q = (values, p) => round(quantile(values, p), 1);
process.stdout.write(
  `${JSON.stringify({
    sessions,
    reads,
    completed: latencies.length,
    errors: errors.length,
    firstErrors: errors.slice(0, 3),
    // Distinct reasons, counted (session and read numbers left out).
    errorKinds: Object.entries(
      errors.reduce((kinds, e) => {
        const kind = e.replace(/^session \d+ (read \d+|connect): /, "");
        kinds[kind] = (kinds[kind] ?? 0) + 1;
        return kinds;
      }, {}),
    ).slice(0, 5),
    p50Ms: q(latencies, 0.5),
    p99Ms: q(latencies, 0.99),
    maxMs: round(latencies.length === 0 ? null : Math.max(...latencies), 1),
    firstReadP50Ms: q(first, 0.5),
    firstReadP99Ms: q(first, 0.99),
    laterReadP99Ms: q(later, 0.99),
    firstReadsOver1s: first.filter((ms) => ms > 1000).length,
    wallMs: round(wallMs, 0),
    readsPerS: latencies.length === 0 ? null : round((latencies.length * 1000) / wallMs, 1),
  })}\n`,
);
process.exit(0);
