/**
 * `stdio`: SIGTERM while the upstream is still starting. Handlers used to be installed only once the upstream had started, so
 * a signal in that window got Node's default action: killed, the child left behind.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, ROOT } from "../helpers/paths.js";
import { readPidFile, signalProcess } from "../helpers/pids.js";
import { tempDir } from "../helpers/tempDir.js";

const SLOW_START = join(ROOT, "test", "fixtures", "servers", "slow-start.mjs");
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function startStdio(args: readonly string[]) {
  const child = spawn(process.execPath, [CLI, "stdio", ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  cleanups.push(() => child.kill("SIGKILL"));
  return { child, exited, stderr: () => stderr };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("stdio: SIGTERM during startup", () => {
  it("while a remote upstream does not answer its first request: exit 0, the connection dropped", async () => {
    // A server that accepts and never answers keeps the proxy in startup (the OPTIONS probe).
    const sockets: Socket[] = [];
    // It reads what it is sent (the probe may already be written when SIGTERM comes): a socket
    // nobody reads never sees the peer's end, and would never close.
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.resume();
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(() => {
      for (const s of sockets) s.destroy();
      server.close();
    });
    const { port } = server.address() as { port: number };
    const proxy = startStdio(["--url", `http://127.0.0.1:${port}/mcp`]);
    const [socket] = (await once(server, "connection")) as [Socket];
    proxy.child.kill("SIGTERM");
    expect(await proxy.exited, proxy.stderr()).toEqual({ code: 0, signal: null });
    expect(proxy.stderr()).toMatch(/shutting down during startup.*SIGTERM|SIGTERM.*shutting down during startup/);
    if (!socket.closed) await once(socket, "close");
  });

  it("while a slow stdio upstream is starting: exit 0, and the child is ended (by pid)", async () => {
    const dir = tempDir("mcpn-slow-");
    const proxy = startStdio(["--", process.execPath, SLOW_START, join(dir, "pid")]);
    const pid = await readPidFile(join(dir, "pid"));
    cleanups.push(() => {
      if (alive(pid)) signalProcess(pid, "SIGKILL");
    });
    proxy.child.kill("SIGTERM");
    expect(await proxy.exited, proxy.stderr()).toEqual({ code: 0, signal: null });
    // The proxy waits for its child before exiting; allow the kernel a moment to reap it.
    const deadline = Date.now() + 2_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(pid)).toBe(false);
  });
});
