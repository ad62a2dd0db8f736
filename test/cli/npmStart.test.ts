/**
 * `npm start` as a supervisor runs it: SIGTERM goes to npm, which passes it to its script's
 * process. The script must be the proxy itself (`exec`): through a shell that does not pass the
 * signal on (dash), the proxy stayed up, orphaned, holding its port and its upstreams.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/paths.js";

describe("npm start", () => {
  it("SIGTERM to npm stops the proxy it started", async () => {
    const npm = spawn("npm", ["start", "--", "--port", "0"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      // A group of its own: whatever it left running is ended with it after the test.
      detached: true,
    });
    let out = "";
    npm.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise((resolve) => npm.once("exit", resolve));
    try {
      await expect
        .poll(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], { timeout: 30_000, interval: 100 })
        .toBeDefined();
      const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      npm.kill("SIGTERM");
      await exited;
      await expect
        .poll(
          () =>
            fetch(`${url}/healthz`).then(
              () => "still serving",
              () => "gone",
            ),
          { timeout: 15_000, interval: 200 },
        )
        .toBe("gone");
    } finally {
      try {
        process.kill(-npm.pid!, "SIGKILL");
      } catch {
        // The group has ended.
      }
    }
  }, 60_000);
});
