/**
 * A stdio upstream is its own process group, ended as a whole: on session end, when the leader
 * exits on its own, and on shutdown — a helper it started (`sleep 300`, even one that ignores
 * SIGTERM) never outlives it. An upstream that closes its stdout but keeps running is over:
 * its pending request gets an error within a second or two and the process is ended.
 */
import { describe, expect, it } from "vitest";
import { connect, hostTransport, raw, startServe } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, initializedWs, processState, toolText, untilGone } from "./helpers.js";

const serveFault = () => startServe(["--name", "fx", "--", process.execPath, FAULT_SERVER]);

async function helperPid(
  host: Awaited<ReturnType<typeof initializedWs>>,
  id: number,
  args: Record<string, unknown> = {},
): Promise<number> {
  const pid = Number(toolText(await host.request(id, "tools/call", { name: "helper", arguments: args })));
  expect(pid).toBeGreaterThan(0);
  return pid;
}

describe("a stdio upstream's helper processes", () => {
  it("end with the session; one that ignores SIGTERM is killed after the grace period", async () => {
    const serve = await serveFault();
    try {
      const host = await initializedWs(serve.url, "fx");
      const leader = Number(toolText(await host.request(1, "tools/call", { name: "pid" })));
      const helper = await helperPid(host, 2);
      const stubborn = await helperPid(host, 3, { stubborn: true });
      expect(processState(helper)).toMatch(/[RS]/);
      await host.close();
      expect(await untilGone(leader)).toBe(true);
      expect(await untilGone(helper)).toBe(true);
      // SIGTERM is ignored: SIGKILL after the 2 s grace.
      expect(await untilGone(stubborn, 8000)).toBe(true);
    } finally {
      await serve.stop();
    }
  });

  it("end when the leader exits on its own", async () => {
    const serve = await serveFault();
    try {
      const host = await initializedWs(serve.url, "fx");
      const leader = Number(toolText(await host.request(1, "tools/call", { name: "pid" })));
      const helper = await helperPid(host, 2, { exit: true });
      expect(await untilGone(leader)).toBe(true);
      expect(await untilGone(helper)).toBe(true);
      await host.closed;
    } finally {
      await serve.stop();
    }
  });

  it("end on shutdown (SIGTERM to serve)", async () => {
    const serve = await serveFault();
    const host = await initializedWs(serve.url, "fx");
    const helper = await helperPid(host, 1, { stubborn: true });
    expect(await serve.stop()).toBe(0);
    expect(await untilGone(helper, 8000)).toBe(true);
  });

  it("end with a stdio-mode proxy when its host goes away", async () => {
    const host = await connect(hostTransport("stdio", { stdioArgs: ["--", process.execPath, FAULT_SERVER] }));
    const helper = Number(
      ((await raw(host.client, "tools/call", { name: "helper", arguments: {} })).content as Array<{ text: string }>)[0]!
        .text,
    );
    expect(processState(helper)).toMatch(/[RS]/);
    await host.close();
    expect(await untilGone(helper)).toBe(true);
  });
});

describe("an upstream that closes its stdout but keeps running", () => {
  it("its pending request gets an error within two seconds; the process is ended; the next session works", async () => {
    const serve = await serveFault();
    try {
      const host = await initializedWs(serve.url, "fx");
      const leader = Number(toolText(await host.request(1, "tools/call", { name: "pid" })));
      const started = Date.now();
      const answer = await host.request(2, "tools/call", { name: "close-stdout" }, 10_000);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeLessThan(2000);
      expect(answer.error).toMatchObject({ code: -32001 });
      expect((answer.error as { message: string }).message).toContain("closed its stdout while still running");
      expect(await untilGone(leader)).toBe(true);
      await host.closed;
      const next = await initializedWs(serve.url, "fx");
      expect(Number(toolText(await next.request(1, "tools/call", { name: "pid" })))).not.toBe(leader);
      await next.close();
    } finally {
      await serve.stop();
    }
  });
});
