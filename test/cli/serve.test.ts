/** `serve` when its own listener cannot bind: a runtime failure (exit 1) naming the address. */
import { createServer, type Server } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";
import { FAULT_SERVER } from "../reliability/helpers.js";

describe("serve on a port that is already taken", () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  });

  it("exits 1 (a listener failed, as --help says), naming host, port and the cause", async () => {
    const file = join(tempDir("mcpn-serve-"), "c.json");
    writeFileSync(file, JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } } }));
    const run = await runCli(["serve", "--config", file, "--port", String(port)], { timeoutMs: 15_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`serve: cannot listen on 127.0.0.1:${port}`);
    expect(run.stderr).toMatch(/EADDRINUSE/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});
