import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createProgress } from "../../src/cli/audit/progressBar.js";
import { runAudit } from "../../src/cli/audit/runAudit.js";
import { loadTokenCounter } from "../../src/cli/audit/tokens.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { createUpstreamTransport } from "../../src/transports/upstream/index.js";
import { testPolicy } from "../helpers/policy.js";

const AUDIT_UPSTREAM = fileURLToPath(new URL("../fixtures/servers/audit-upstream.mjs", import.meta.url));

function sink(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY, columns: 60 });
  let text = "";
  stream.on("data", (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
}

describe("audit's progress bar", () => {
  it("draws on a terminal, redrawing one line, and clears it at the end", () => {
    const s = sink(true);
    const progress = createProgress(s.stream);
    progress.update(1, 4, "file:///a");
    progress.update(4, 4, "file:///b");
    progress.finish();
    const frames = s.text().split("\r").filter(Boolean);
    expect(frames[0]).toMatch(/^\[#{8}\.{22}\] 1\/4 file:\/\/\/a\s*$/);
    expect(frames[1]).toMatch(/^\[#{30}\] 4\/4 file:\/\/\/b/);
    expect(frames[0]!.length).toBe(59);
    expect(frames.at(-1)).toBe("\x1b[2K");
  });

  it("shows a label's control characters as symbols: a server's URI cannot set the title or clear the screen", () => {
    const s = sink(true);
    const progress = createProgress(s.stream);
    progress.update(1, 2, "x://a\x1b]0;PWNED\x07\x1b[2J\rb");
    const drawn = s.text();
    expect(drawn.includes("\x1b") || drawn.includes("\x07")).toBe(false);
    expect(drawn).toContain("x://a␛]0;PWNED␇␛[2J b");
  });

  it("writes nothing when stderr is not a terminal (a pipe, a CI log)", () => {
    const s = sink(false);
    const progress = createProgress(s.stream);
    progress.update(1, 2);
    progress.finish();
    expect(s.text()).toBe("");
  });
});

describe("audit's progress as it runs (the audit fixture server, a real child process)", () => {
  it("0/N before anything is read, then each item before its slow steps (reading, tokens), then done", async () => {
    const s = sink(true);
    const bar = createProgress(s.stream);
    const updates: Array<[number, number, string]> = [];
    await runAudit({
      transport: createUpstreamTransport(
        { command: process.execPath, args: [AUDIT_UPSTREAM] },
        { maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes },
      ),
      server: "audit",
      upstream: "audit",
      policy: testPolicy(),
      requestTimeoutMs: DEFAULT_LIMITS.requestTimeoutMs,
      tokens: await loadTokenCounter(),
      // One read at a time: the order of the updates is the order of the work.
      concurrency: 1,
      onProgress: (done, total, label) => {
        updates.push([done, total, label]);
        bar.update(done, total, label);
      },
    });
    bar.finish();
    // audit://ok.txt is read and changed (its tokens counted); audit://gone answers an error;
    // audit://empty answers no contents.
    expect(updates).toEqual([
      [0, 3, ""],
      [0, 3, "reading audit://ok.txt"],
      [0, 3, "normalizing audit://ok.txt"],
      [0, 3, "counting tokens audit://ok.txt"],
      [1, 3, "audit://ok.txt"],
      [1, 3, "reading audit://gone"],
      [2, 3, "audit://gone"],
      [2, 3, "reading audit://empty"],
      [3, 3, "audit://empty"],
    ]);
    // What the terminal shows first: the empty bar at 0/3, then what is being read.
    const frames = s.text().split("\r").filter(Boolean);
    expect(frames[0]).toMatch(/^\[\.{30}\] 0\/3\s*$/);
    expect(frames[1]).toMatch(/^\[\.{30}\] 0\/3 reading audit:\/\/ok\.txt\s*$/);
  });
});
