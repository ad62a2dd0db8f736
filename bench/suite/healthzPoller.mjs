#!/usr/bin/env node
/**
 * `node healthzPoller.mjs URL INTERVAL_MS TIMEOUT_MS`: GETs URL every INTERVAL_MS (one request at a
 * time) until its stdin ends, then prints {latenciesMs, failures} as JSON on stdout. A process of
 * its own, so what it measures is the proxy's answer time, not the event loop of a benchmark
 * harness that is busy reading a flood.
 */
import { request } from "node:http";

const [url, intervalMs = "100", timeoutMs = "10000"] = process.argv.slice(2);
const latenciesMs = [];
let failures = 0;
let running = true;
process.stdin.on("end", () => (running = false));
process.stdin.resume();

function get() {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { timeout: Number(timeoutMs) }, (res) => {
      res.resume();
      res.on("end", () => resolve({ ok: res.statusCode === 200, ms: performance.now() - started }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve({ ok: false, ms: performance.now() - started }));
    req.end();
  });
}

while (running) {
  const { ok, ms } = await get();
  latenciesMs.push(Math.round(ms * 10) / 10);
  if (!ok) failures++;
  await new Promise((resolve) => setTimeout(resolve, Number(intervalMs)));
}
process.stdout.write(`${JSON.stringify({ latenciesMs, failures })}\n`);
