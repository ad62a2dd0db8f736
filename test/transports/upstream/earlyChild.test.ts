/**
 * A stdio upstream spawned before the proxy has loaded (`stdio -- CMD`), taken over by the
 * transport: whatever the child did in between reaches the transport as if it had been there.
 */
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { claimEarly, spawnEarly, upstreamSpawnOptions } from "../../../src/transports/upstream/earlyChild.js";
import { StdioUpstreamTransport } from "../../../src/transports/upstream/stdioUpstream.js";
import { endedAtExit } from "../../../src/transports/upstream/processGroup.js";
import { defaultChildEnvironment } from "../../../src/proxy/defaultChildEnvironment.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";

const NODE = process.execPath;
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const until = async (check: () => boolean, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** Ends the early child a test left untaken: a claim no child can match ends the one waiting. */
afterEach(() => void claimEarly("", [], {}));

describe("early-spawned stdio upstream", () => {
  it("a child that spoke and exited before the transport took it: its message, last stderr line and exit all arrive", async () => {
    const script = `process.stdout.write(JSON.stringify({jsonrpc:"2.0",method:"notifications/message",params:{level:"info",data:"hello"}})+"\\n"); process.stderr.write("fatal: no database\\n"); process.exit(3);`;
    const early = spawnEarly(NODE, ["-e", script]);
    await new Promise<void>((resolve) => early.child.once("exit", () => resolve()));
    // Let Node run what it does after an exit (it reads and drops unread output of a child nobody listens to).
    await new Promise((r) => setTimeout(r, 100));
    const transport = new StdioUpstreamTransport({
      command: NODE,
      args: ["-e", script],
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const messages: unknown[] = [];
    const errors: Error[] = [];
    let closed = false;
    transport.onmessage = (m) => void messages.push(m);
    transport.onerror = (e) => void errors.push(e);
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    expect(transport.pid).toBe(early.child.pid);
    await until(() => closed);
    expect(messages).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hello" } },
    ]);
    expect(transport.exitInfo?.code).toBe(3);
    expect(errors.map((e) => e.message).join(" ")).toContain("fatal: no database");
  });

  it("a running child is taken over and answers", async () => {
    const script = `process.stdin.on("data", (d) => { const m = JSON.parse(String(d)); process.stdout.write(JSON.stringify({jsonrpc:"2.0",id:m.id,result:{}})+"\\n"); });`;
    const early = spawnEarly(NODE, ["-e", script]);
    const transport = new StdioUpstreamTransport({
      command: NODE,
      args: ["-e", script],
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const answers: unknown[] = [];
    transport.onmessage = (m) => void answers.push(m);
    await transport.start();
    expect(transport.pid).toBe(early.child.pid);
    await transport.send({ jsonrpc: "2.0", id: 7, method: "ping" });
    await until(() => answers.length === 1);
    expect(answers[0]).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
    await transport.close();
    expect(alive(early.child.pid!)).toBe(false);
  });

  it("another command line: the early child is ended and the transport spawns its own", async () => {
    const early = spawnEarly(NODE, ["-e", "setInterval(() => {}, 1000)"]);
    const transport = new StdioUpstreamTransport({
      command: NODE,
      args: ["-e", "setInterval(() => {}, 1000)"],
      env: { EXTRA: "1" },
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    await transport.start();
    expect(transport.pid).not.toBe(early.child.pid);
    await until(() => !alive(early.child.pid!));
    // Its group is gone: its id, free again, is not signalled when this process exits.
    expect(endedAtExit(early.child.pid!)).toBe(false);
    expect(endedAtExit(transport.pid!)).toBe(true);
    await transport.close();
    await until(() => !endedAtExit(transport.pid!), 2_000);
  });

  it("a command that does not exist fails the transport's start as it always did", async () => {
    spawnEarly("/nonexistent/upstream-binary", []);
    await new Promise((r) => setTimeout(r, 50));
    const transport = new StdioUpstreamTransport({
      command: "/nonexistent/upstream-binary",
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    await expect(transport.start()).rejects.toThrow(
      /could not start upstream command "\/nonexistent\/upstream-binary"/,
    );
  });

  it("is claimed once", () => {
    spawnEarly(NODE, ["-e", "setTimeout(() => {}, 5000)"]);
    const options = upstreamSpawnOptions({ ...process.env }, undefined);
    const claimed = claimEarly(NODE, ["-e", "setTimeout(() => {}, 5000)"], options);
    expect(claimed).toBeDefined();
    expect(claimEarly(NODE, ["-e", "setTimeout(() => {}, 5000)"], options)).toBeUndefined();
    // Taken, it is its taker's to end: here, the test's.
    claimed?.child.kill("SIGKILL");
  });

  it("the default child environment is the SDK's", () => {
    const env = { HOME: "/h", PATH: "/bin", SHELL: "() { :; }", TERM: "xterm", SECRET: "s" };
    const saved = { ...process.env };
    try {
      Object.assign(process.env, env);
      expect(defaultChildEnvironment(process.env)).toEqual(getDefaultEnvironment());
    } finally {
      for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
      Object.assign(process.env, saved);
    }
    expect(defaultChildEnvironment(env)).toEqual({ HOME: "/h", PATH: "/bin", TERM: "xterm" });
  });
});
