/**
 * A stateless host (protocol 2026-07-28) whose POST takes JSON only (`Accept: application/json`)
 * calls a tool that asks it a question (elicitation, sampling). A JSON answer has no stream for
 * the question, and a stateless host no GET stream: the upstream is answered with an error at
 * once, so the call ends now — not after `limits.requestTimeoutMs` with an error that blames the
 * upstream. With an event stream accepted, the question still reaches the host.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";

const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "elicit", arguments: {} } };

describe("a stateless POST that takes JSON only, asked a question by its tool", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
      limits: { requestTimeoutMs: 60_000 },
    });
  });
  afterAll(async () => {
    await serve?.stop();
  });

  const post = (accept: string, signal?: AbortSignal) =>
    fetch(`${serve.url}/mcp/fx`, {
      method: "POST",
      headers: { "content-type": "application/json", accept, "mcp-protocol-version": "2026-07-28" },
      body: JSON.stringify(call),
      ...(signal === undefined ? {} : { signal }),
    });

  it("is answered at once: the upstream is told the host cannot be asked", async () => {
    const started = Date.now();
    const response = await post("application/json");
    const body = await response.text();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(body).toContain('"id":7');
    expect(body).toContain("cannot be asked");
    expect(body).not.toContain("limits.requestTimeoutMs");
  }, 15_000);

  it("with an event stream accepted, the question reaches the host", async () => {
    const aborted = new AbortController();
    const response = await post("application/json, text/event-stream", aborted.signal);
    const reader = response.body!.getReader();
    let text = "";
    while (!text.includes("elicitation/create")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    aborted.abort();
    expect(text).toContain('"method":"elicitation/create"');
  });
});
