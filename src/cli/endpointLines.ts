/**
 * What `serve` prints once it listens: each server's exact URLs (its name percent-encoded, as
 * a host must type it), the bare paths when there is only one server, and the service paths.
 */
import { serverPathSegment } from "../config/serverName.js";

export function endpointLines(base: string, servers: readonly string[]): string[] {
  const ws = base.replace(/^http/, "ws");
  const lines = [`mcp-normalizer listening on ${base}`];
  for (const name of servers) {
    const segment = serverPathSegment(name);
    lines.push(`  ${name}: ${base}/mcp/${segment}  (SSE ${base}/sse/${segment}, WebSocket ${ws}/ws/${segment})`);
  }
  if (servers.length === 1) lines.push(`  the one server also at: ${base}/mcp  (SSE ${base}/sse, WebSocket ${ws}/ws)`);
  lines.push(`  health: ${base}/healthz   metrics: ${base}/metrics   report: ${base}/report`);
  return lines;
}
