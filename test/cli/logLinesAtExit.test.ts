/**
 * Operational lines logged just before the proxy exits reach stderr, even when stderr is a pipe
 * its reader has not kept up with: the real `stdio` command, an upstream that floods its stderr
 * (logged line by line as `upstream stderr`) and dies, and a host that reads the proxy's stderr
 * only once the proxy has reached its exit. Node's own process.stderr would drop what the full
 * pipe had not taken — the last line, `upstream ended; closing`, among it.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { CLI, ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";

const FLOOD_SERVER = join(ROOT, "test", "fixtures", "servers", "stderr-flood-server.mjs");
/** ~3 MB of operational lines: far more than a pipe (64 KiB) and the host's read buffer hold. */
const FLOOD_LINES = 20_000;

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const FLOOD_CALL = {
  jsonrpc: "2.0",
  id: 2,
  method: "tools/call",
  params: { name: "flood", arguments: { lines: FLOOD_LINES } },
};

describe("operational lines at exit", () => {
  it("every line, the last error included, reaches a stderr pipe read only after the proxy exited; stdout carries none", async () => {
    // Every line logged (limits.stderrLinesLogged raised to the flood's size): megabytes of them.
    const config = join(tempDir("mcpn-exit-lines-"), "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { flood: { command: process.execPath, args: [FLOOD_SERVER] } },
        limits: { stderrLinesLogged: FLOOD_LINES },
      }),
    );
    const child = spawn(process.execPath, [CLI, "stdio", "--config", config], { stdio: ["pipe", "pipe", "pipe"] });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    // A 'readable' listener that reads nothing: stderr stays unread (Node would otherwise drain a
    // child's unread pipes itself once the child has exited, and drop what it read).
    const unread = (): void => {};
    child.stderr.on("readable", unread);
    try {
      const stdout: string[] = [];
      let partial = "";
      const answered = new Map<number, (message: Record<string, unknown>) => void>();
      child.stdout.on("data", (chunk: Buffer) => {
        const parts = (partial + chunk.toString("utf8")).split("\n");
        partial = parts.pop() ?? "";
        for (const text of parts) {
          stdout.push(text);
          const message = JSON.parse(text) as Record<string, unknown>;
          if (typeof message.id === "number") answered.get(message.id)?.(message);
        }
      });
      const send = (message: Record<string, unknown>): void => void child.stdin.write(`${JSON.stringify(message)}\n`);
      const answer = (id: number, ms: number): Promise<Record<string, unknown> | undefined> =>
        new Promise((resolve) => {
          const timer = setTimeout(() => resolve(undefined), ms);
          answered.set(id, (message) => {
            clearTimeout(timer);
            resolve(message);
          });
        });

      const initialized = answer(1, 20_000);
      send(INITIALIZE);
      expect(await initialized).toHaveProperty("result");
      send(INITIALIZED);
      const called = answer(2, 20_000);
      send(FLOOD_CALL);
      // The call is answered with an error once the upstream has died; the proxy then logs its
      // last line and exits. Its stderr has not been read all this time.
      expect(await called).toHaveProperty("error");
      await new Promise((resolve) => setTimeout(resolve, 500));

      const stderr: Buffer[] = [];
      child.stderr.off("readable", unread);
      child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
      child.stderr.resume();
      const code = await Promise.race([
        closed,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("the proxy did not exit within 30 s")), 30_000).unref(),
        ),
      ]);

      expect(code).toBe(1);
      const lines = Buffer.concat(stderr).toString("utf8").split("\n");
      expect(lines.pop()).toBe("");
      const parsed = lines.map((text) => JSON.parse(text) as Record<string, unknown>);
      const flood = parsed.filter((entry) => entry.msg === "upstream stderr").map((entry) => entry.line);
      expect(flood).toEqual(Array.from({ length: FLOOD_LINES }, (_, n) => `flood ${n}`));
      expect(parsed.at(-1)).toMatchObject({ level: "error", msg: "upstream ended; closing" });
      expect(Object.keys(parsed.at(-1)!)).toEqual(["level", "time", "upstream", "msg"]);
      // stdout is JSON-RPC only.
      for (const text of stdout) expect(JSON.parse(text)).toHaveProperty("jsonrpc", "2.0");
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a server printing without end: its lines are logged up to limits.stderrLinesLogged in 10 s, the rest counted", async () => {
    const child = spawn(process.execPath, [CLI, "stdio", "--", process.execPath, FLOOD_SERVER], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stderr: Buffer[] = [];
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      const send = (message: Record<string, unknown>): void => void child.stdin.write(`${JSON.stringify(message)}\n`);
      send(INITIALIZE);
      send(INITIALIZED);
      send(FLOOD_CALL);
      await Promise.race([
        closed,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("the proxy did not exit within 30 s")), 30_000).unref(),
        ),
      ]);
      const parsed = Buffer.concat(stderr)
        .toString("utf8")
        .split("\n")
        .filter((text) => text.startsWith("{"))
        .map((text) => JSON.parse(text) as Record<string, unknown>);
      const flood = parsed.filter((entry) => entry.msg === "upstream stderr");
      const logged = DEFAULT_LIMITS.stderrLinesLogged;
      expect(flood.map((entry) => entry.line)).toEqual([
        ...Array.from({ length: logged }, (_, n) => `flood ${n}`),
        `flood ${FLOOD_LINES - 1}`,
      ]);
      expect(flood.at(-1)).toMatchObject({ notLogged: FLOOD_LINES - logged - 1 });
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a server gone quiet after more lines than are logged: their count and last line are logged when the 10 s are over", async () => {
    const lines = DEFAULT_LIMITS.stderrLinesLogged + 100;
    const script = `for (let n = 0; n < ${lines}; n++) console.error("early " + n); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, [CLI, "stdio", "--", process.execPath, "-e", script], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    try {
      const told = `"line":"early ${lines - 1}","notLogged":99`;
      for (let waited = 0; !stderr.includes(told) && waited < 15_000; waited += 250)
        await new Promise((resolve) => setTimeout(resolve, 250));
      expect(stderr).toContain(told);
    } finally {
      child.kill("SIGKILL");
    }
  }, 20_000);

  it("an upstream that ends while its stderr stays open (it closed stdout): the count is told before its end, nothing after it", async () => {
    // Ended for closing its stdout, it prints more as it goes (on SIGTERM): not logged after its end.
    const script =
      'for (let n = 0; n < 10; n++) console.error("line " + n); require("node:fs").closeSync(1); ' +
      'process.on("SIGTERM", () => { for (let n = 0; n < 6; n++) console.error("term " + n); ' +
      "setTimeout(() => process.exit(0), 200); }); setInterval(() => {}, 1000);";
    const config = join(tempDir("mcpn-exit-lines-"), "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { s: { command: process.execPath, args: ["-e", script] } },
        limits: { stderrLinesLogged: 3 },
      }),
    );
    const child = spawn(process.execPath, [CLI, "stdio", "--config", config], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    try {
      child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
      for (let waited = 0; !stderr.includes("upstream ended") && waited < 15_000; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      // Its SIGTERM comes after the end: time for what it prints then to arrive.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const told = stderr.indexOf('"line":"line 9","notLogged":6');
      expect(told).toBeGreaterThan(-1);
      expect(told).toBeLessThan(stderr.indexOf("upstream ended"));
      expect(stderr.slice(stderr.indexOf("upstream ended"))).not.toContain("upstream stderr");
    } finally {
      child.kill("SIGKILL");
    }
  }, 20_000);
});
