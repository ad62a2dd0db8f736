import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createProgress } from "../../src/cli/audit/progressBar.js";

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
