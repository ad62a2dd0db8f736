/**
 * One child process SVGs are parsed and drawn in, one at a time, killed when a fit is given up.
 * resvg's render cannot be stopped once it runs (its abort only drops the result), and a few
 * kilobytes of SVG — filtered shapes repeated — can keep it drawing for minutes: in this process
 * it would hold a thread of libuv's small pool (shared with file, DNS and zlib work) and a core
 * long after `limits.fitTimeoutMs` answered the host. A child ends with SIGKILL.
 *
 * The SVG's own size is read there too, from a parse: a few kilobytes of `<use>` nested in `<use>`
 * expand to millions of shapes, and that parse alone takes seconds and gigabytes — in the child,
 * not on the proxy's one thread.
 *
 * No drawing outlives the proxy: children still running when it exits are killed, and one whose
 * proxy died without a word (SIGKILL) sees its stdin end — it draws off its main thread, so it
 * hears that — and exits (after the size parse, which runs on its main thread, if it is in it).
 *
 * The child is a few lines given to `node -e`, as CommonJS whatever NODE_OPTIONS says (the same
 * from the sources and the built package). For each SVG it reads one JSON line (fonts, the
 * longest side wanted, the SVG's length), then the SVG; it answers one JSON line (the SVG's own
 * size and the PNG's length, or why it failed, and its resident memory), then the PNG.
 */
import { type ChildProcess, spawn } from "node:child_process";

const CHILD_SOURCE = `
const { Resvg, renderAsync } = require(process.argv[1]);
let chunks = [];
let received = 0;
let header;
let busy = false;
const answer = (head, png) => {
  head.rss = process.memoryUsage().rss;
  process.stdout.write(JSON.stringify(head) + "\\n");
  if (png !== undefined) process.stdout.write(png);
  busy = false;
  next();
};
const fail = (why, error) => answer({ error: why + (error instanceof Error ? error.message : String(error)) });
function draw(svg) {
  let width;
  let height;
  try {
    const parsed = new Resvg(svg, { font: { loadSystemFonts: false }, logLevel: "off" });
    width = parsed.width;
    height = parsed.height;
  } catch (error) {
    return fail("SVG does not parse: ", error);
  }
  if (!(width > 0 && height > 0)) return answer({ error: "SVG has no size" });
  // Drawn at most maxDimension on its long side, at its own size when that is smaller.
  const scale = Math.min(1, header.maxDimension / Math.max(width, height));
  const fitTo =
    width >= height
      ? { mode: "width", value: Math.max(1, Math.round(width * scale)) }
      : { mode: "height", value: Math.max(1, Math.round(height * scale)) };
  renderAsync(svg, { font: header.font, fitTo, logLevel: "off" }).then(
    (image) => {
      const png = image.asPng();
      answer({ width, height, pngBytes: png.length }, png);
    },
    (error) => fail("SVG does not render: ", error),
  );
}
function next() {
  if (busy || chunks.length === 0) return;
  if (header === undefined) {
    const head = Buffer.concat(chunks);
    const newline = head.indexOf(10);
    if (newline === -1) {
      chunks = [head];
      return;
    }
    header = JSON.parse(head.subarray(0, newline).toString("utf8"));
    chunks = [head.subarray(newline + 1)];
    received = chunks[0].length;
  }
  if (received < header.length) return;
  // Joined once, when all of it is here.
  const all = Buffer.concat(chunks);
  const rest = all.subarray(header.length);
  chunks = rest.length > 0 ? [rest] : [];
  received = rest.length;
  busy = true;
  try {
    draw(all.subarray(0, header.length));
  } finally {
    header = undefined;
  }
}
process.stdin.on("data", (chunk) => {
  chunks.push(chunk);
  received += chunk.length;
  next();
});
// Its proxy is gone. Not process.exit: that waits for the drawing's thread to finish.
process.stdin.on("end", () => process.kill(process.pid, "SIGKILL"));
`;

export interface SvgRenderOptions {
  readonly font: { readonly loadSystemFonts: boolean };
  /** The longest side drawn, in pixels (an SVG smaller than this is drawn at its own size). */
  readonly maxDimension: number;
}

export interface RenderedPng {
  readonly png: Buffer;
  readonly width: number;
  readonly height: number;
  /** The SVG's own size, before scaling to `maxDimension`. */
  readonly sourceWidth: number;
  readonly sourceHeight: number;
}

/** A drawing and the child's resident memory once it was done. */
export interface ChildAnswer {
  readonly rendered: RenderedPng;
  readonly rss: number;
}

/** Most of the child's stderr kept for the error it ends with. */
const STDERR_KEPT = 2048;
/** The longest answer line a child writes (sizes and a one-line error). */
const ANSWER_LINE_MAX = 64 * 1024;

interface Job {
  readonly resolve: (answer: ChildAnswer) => void;
  readonly reject: (error: Error) => void;
  readonly maxPngBytes: number;
  /** The answer's line, once read: the PNG's bytes follow it. */
  head?: { width: number; height: number; pngBytes: number; rss: number };
}

/** A child drawing SVGs one at a time; `onEnd` hears once that it is gone, however it ended. */
export class SvgRenderChild {
  private readonly child: ChildProcess;
  private out: Buffer[] = [];
  private outBytes = 0;
  private stderr = "";
  private job: Job | undefined;
  private failure: string | undefined;
  private ended = false;

  constructor(resvgPath: string, onEnd: (child: SvgRenderChild) => void) {
    this.child = spawn(process.execPath, ["--input-type=commonjs", "-e", CHILD_SOURCE, resvgPath], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout!.on("data", (chunk: Buffer) => this.received(chunk));
    this.child.stderr!.on("data", (chunk: Buffer) => {
      if (this.stderr.length < STDERR_KEPT)
        this.stderr += chunk.toString("utf8").slice(0, STDERR_KEPT - this.stderr.length);
    });
    // A child that died before reading all of the SVG: its exit says why, not the broken pipe.
    this.child.stdin!.on("error", () => {});
    this.child.on("error", (error) => this.kill(error.message));
    this.child.on("close", (code, signal) => {
      this.ended = true;
      this.child.stdin!.destroy();
      const job = this.job;
      this.job = undefined;
      job?.reject(new Error(this.failure ?? renderError(this.stderr, code, signal)));
      onEnd(this);
    });
  }

  /** Neither ended nor being killed: one killed as its answer was on the way is not drawn in again. */
  get alive(): boolean {
    return !this.ended && this.failure === undefined;
  }

  /** Draws `svg`; rejects when the child says it cannot, or ends first. One drawing at a time. */
  render(svg: string, options: SvgRenderOptions): Promise<ChildAnswer> {
    if (this.job !== undefined) throw new Error("an SVG renderer draws one SVG at a time");
    // The PNG of a canvas whose long side is `maxDimension` at most: 4 bytes a pixel, plus framing.
    const maxPngBytes = 4 * options.maxDimension * options.maxDimension + 1024 * 1024;
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(new Error(this.failure ?? "the renderer has ended"));
      this.job = { resolve, reject, maxPngBytes };
      this.stderr = "";
      const bytes = Buffer.from(svg);
      const header = JSON.stringify({ ...options, length: bytes.length });
      this.child.stdin!.write(Buffer.concat([Buffer.from(`${header}\n`), bytes]));
    });
  }

  /** Ends the child at once (a drawing in it is dropped, with `why` as its error). */
  kill(why: string): void {
    this.failure ??= why;
    this.child.kill("SIGKILL");
  }

  /** Whether the child keeps this process running: not while it waits for work. */
  hold(held: boolean): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as unknown as Array<{
      ref?(): void;
      unref?(): void;
    }>)
      held ? handle.ref?.() : handle.unref?.();
  }

  private received(chunk: Buffer): void {
    const why = this.take(chunk);
    if (why !== undefined) this.kill(why);
  }

  /** Takes what the child wrote; why the child must be ended, when it must. */
  private take(chunk: Buffer): string | undefined {
    const job = this.job;
    if (job === undefined) return "the renderer wrote when not asked";
    this.out.push(chunk);
    this.outBytes += chunk.length;
    if (job.head === undefined) {
      const written = Buffer.concat(this.out);
      const newline = written.indexOf(0x0a);
      if (newline === -1) {
        this.out = [written];
        return written.length > ANSWER_LINE_MAX ? "the renderer's answer does not read" : undefined;
      }
      const head = answerOf(written.subarray(0, newline));
      if (head === undefined) return "the renderer's answer does not read";
      if ("error" in head) {
        this.finish();
        job.reject(new Error(head.error));
        return undefined;
      }
      if (head.pngBytes > job.maxPngBytes) return `its PNG is larger than ${job.maxPngBytes} bytes`;
      job.head = head;
      this.out = [written.subarray(newline + 1)];
      this.outBytes = this.out[0]!.length;
    }
    if (this.outBytes < job.head.pngBytes) return undefined;
    if (this.outBytes > job.head.pngBytes) return "the renderer wrote more than its PNG";
    const png = Buffer.concat(this.out);
    this.finish();
    if (!isPng(png)) {
      job.reject(new Error("the renderer's PNG does not read"));
      return undefined;
    }
    const { width, height, rss } = job.head;
    job.resolve({
      rendered: {
        png,
        width: png.readUInt32BE(16),
        height: png.readUInt32BE(20),
        sourceWidth: width,
        sourceHeight: height,
      },
      rss,
    });
    return undefined;
  }

  /** The drawing is answered: the child is free for the next. */
  private finish(): void {
    this.out = [];
    this.outBytes = 0;
    this.job = undefined;
  }
}

type Answer = { error: string } | { width: number; height: number; pngBytes: number; rss: number };

/** The child's answer line: an error, or the SVG's own size and the PNG's length. */
function answerOf(line: Buffer): Answer | undefined {
  try {
    const answer = JSON.parse(line.toString("utf8")) as Record<string, unknown>;
    if (typeof answer.error === "string") return { error: answer.error };
    const { width, height, pngBytes, rss } = answer;
    return typeof width === "number" &&
      typeof height === "number" &&
      Number.isSafeInteger(pngBytes) &&
      typeof rss === "number"
      ? { width, height, pngBytes: pngBytes as number, rss }
      : undefined;
  } catch {
    return undefined;
  }
}

/** A PNG's signature and its IHDR chunk (which holds the width and height) are there. */
function isPng(bytes: Buffer): boolean {
  return bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.toString("latin1", 12, 16) === "IHDR";
}

/** The first error line the child wrote on stderr, else how it ended. */
function renderError(stderr: string, code: number | null, signal: NodeJS.Signals | null): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /^(\w*Error|Error)\b/.test(line));
  const first = lines[0]?.replace(/^Error: /, "");
  return first ?? (signal !== null ? `the renderer ended by ${signal}` : `the renderer exited with ${code}`);
}
