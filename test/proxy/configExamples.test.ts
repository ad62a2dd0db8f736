/**
 * The configs users start from, exercised for real: the top-level proxy.config.json (what
 * `npm start` serves), the desktop-host example over `stdio --config`, and the sidecar example
 * (bearer token from the environment, an HTTP upstream, a non-loopback bind).
 */

import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CLI, ROOT } from "../helpers/paths.js";
import { runCli } from "../helpers/runCli.js";
import {
  connect,
  hostTransport,
  raw,
  startFixtureServe,
  startServe,
  type ServeProcess,
} from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

const logDir = tempDir("mcpn-logs-");
const running: ServeProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
});

describe("config files", () => {
  it("proxy.config.json (npm start): the everything server's blob template comes back as text over /mcp", async () => {
    const serve = await startServe([
      "--config",
      join(ROOT, "proxy.config.json"),
      "--log-file",
      join(logDir, "start.jsonl"),
    ]);
    running.push(serve);
    const health = await (await fetch(`${serve.url}/healthz`)).json();
    expect(health).toMatchObject({ servers: { everything: expect.any(Object) } });
    const host = await connect(hostTransport("mcp", { url: serve.url, name: "everything" }));
    try {
      const result = await raw(host.client, "resources/read", { uri: "demo://resource/dynamic/blob/1" });
      expect((result.contents as Array<Record<string, unknown>>)[0]).toMatchObject({
        mimeType: "text/plain",
        text: expect.stringMatching(/^Resource 1/),
      });
    } finally {
      await host.close();
    }
  });

  it("config/examples/desktop-host.json over stdio --config --server filesystem", async () => {
    const host = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          CLI,
          "stdio",
          "--config",
          join(ROOT, "config", "examples", "desktop-host.json"),
          "--server",
          "filesystem",
          "--log-file",
          join(logDir, "desktop.jsonl"),
        ],
        cwd: ROOT,
        stderr: "pipe",
      }),
    );
    try {
      const result = await raw(host.client, "tools/call", {
        name: "read_media_file",
        arguments: { path: join(ROOT, "README.md") },
      });
      const resource = (result.content as Array<{ resource?: Record<string, unknown> }>)[0]!.resource!;
      expect(resource.mimeType).toBe("text/markdown");
      expect(String(resource.text)).toMatch(/^# mcp-normalizer/);
    } finally {
      await host.close();
    }
  });

  it("config/examples/sidecar.json: bearer token from the environment, an HTTP upstream", async () => {
    const upstream = await startFixtureServe();
    running.push(upstream);
    const token = "sidecar-test-token";
    const serve = await startServe(
      ["--config", join(ROOT, "config", "examples", "sidecar.json"), "--log-file", join(logDir, "sidecar.jsonl")],
      { MCPN_TOKEN: token, UPSTREAM_URL: `${upstream.url}/mcp/fx` },
    );
    running.push(serve);
    const url = serve.url.replace("0.0.0.0", "127.0.0.1");
    const unauthorized = await fetch(`${url}/mcp/app`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(unauthorized.status).toBe(401);
    const host = await connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp/app`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const result = await raw(host.client, "resources/read", { uri: "fixture://own/blob/1" });
      expect(result.contents).toEqual([
        { uri: "fixture://own/blob/1", mimeType: "text/plain", text: "Resource 1: This is a base64 blob" },
      ]);
    } finally {
      await host.close();
    }
  });

  it("config/examples/audit.json: audit --config reads every resource the everything server lists and reports consistent totals", async () => {
    const run = await runCli(
      ["audit", "--config", join(ROOT, "config", "examples", "audit.json"), "--format", "json"],
      { cwd: ROOT, timeoutMs: 90_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as {
      schemaVersion: number;
      resources: { listed: number };
      totals: { bytesBefore: number; bytesAfter: number; saved: number };
    };
    expect(report.schemaVersion).toBe(1);
    expect(report.resources.listed).toBeGreaterThan(0);
    expect(report.totals.saved).toBe(report.totals.bytesBefore - report.totals.bytesAfter);
  }, 120_000);
});
