/**
 * Starting and stopping an HTTP proxy process for one benchmark path: spawned in its own process
 * group (so its upstream children go with it), its output drained and the tail kept for errors,
 * readiness awaited on an event or a bounded port probe, and a cleanup that always ends it.
 */
import { spawn } from "node:child_process";
import { createConnection, createServer } from "node:net";
import { tail } from "./outputTail.mjs";

/** How long a stopping proxy gets after SIGTERM before SIGKILL (long enough to write a --cpu-prof profile). */
export const STOP_GRACE_MS = 10_000;
/** Delay between readiness probes of a peer that does not say when it listens. */
export const PORT_PROBE_INTERVAL_MS = 25;

/** Every group this module started, ended if the harness itself exits early. */
const live = new Set();
process.on("exit", () => {
  for (const pid of live) killGroup(pid, "SIGKILL");
});
// Interrupted (Ctrl-C, a test timeout): end the proxies first, then go with the usual exit code.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    for (const pid of live) killGroup(pid, "SIGKILL");
    process.exit(128 + (signal === "SIGINT" ? 2 : 15));
  });
}

function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** A free TCP port on 127.0.0.1, for peers that cannot report the port they bound with --port 0. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `command args` and waits until it is ready: `readyLine` (a RegExp matched against its
 * stdout; its first group is returned) or, without one, until `probePort` accepts a connection.
 * Rejects with the process's output when it exits first or `timeoutMs` passes.
 */
export async function startProxyProcess({ command, args, cwd, readyLine, probePort, timeoutMs }) {
  const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
  live.add(child.pid);
  const output = tail();
  let stdoutText = "";
  child.stdout.on("data", (chunk) => {
    output.push(chunk);
    if (readyLine !== undefined && stdoutText.length < 65536) stdoutText += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk) => output.push(chunk));
  const exited = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      // Nothing of its group left: its id may be another process's group later, never signalled again.
      if (!groupAlive(child.pid)) live.delete(child.pid);
      resolve({ code, signal });
    }),
  );

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      killGroup(child.pid, "SIGTERM");
      const timer = setTimeout(() => killGroup(child.pid, "SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    // The group may still hold an upstream the proxy left behind.
    if (live.has(child.pid)) killGroup(child.pid, "SIGKILL");
    live.delete(child.pid);
  };

  const deadline = Date.now() + timeoutMs;
  try {
    const ready =
      readyLine !== undefined
        ? waitForLine(child, () => stdoutText, readyLine, deadline)
        : waitForPort(probePort, deadline, exited);
    const match = await Promise.race([
      ready,
      exited.then(({ code, signal }) => {
        throw new Error(`exited before it was ready (code ${code}, signal ${signal}): ${output.text()}`);
      }),
    ]);
    return { pid: child.pid, match, output: () => output.text(), stop };
  } catch (error) {
    await stop();
    throw new Error(`${command} ${args.join(" ")}: ${error.message}`);
  }
}

function waitForLine(child, text, pattern, deadline) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(text());
      if (match !== null) {
        cleanup();
        resolve(match[1] ?? match[0]);
      }
    };
    const timer = setTimeout(
      () => {
        cleanup();
        reject(new Error(`no line matching ${pattern} on stdout before the deadline`));
      },
      Math.max(0, deadline - Date.now()),
    );
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout.off("data", check);
    };
    child.stdout.on("data", check);
    check();
  });
}

async function waitForPort(port, deadline, exited) {
  let gone = false;
  exited.then(() => {
    gone = true;
  });
  for (;;) {
    if (gone) return new Promise(() => {}); // the exit branch of the race reports it
    if (await canConnect(port)) return port;
    if (Date.now() > deadline) throw new Error(`port ${port} did not accept connections before the deadline`);
    await new Promise((resolve) => setTimeout(resolve, PORT_PROBE_INTERVAL_MS));
  }
}

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
