/**
 * An SVG rendered to PNG in a child process of its own, killed when the fit is given up. resvg's
 * render cannot be stopped once it runs (its abort only drops the result), and a few kilobytes of
 * SVG — filtered shapes repeated — can keep it drawing for minutes: in this process it would hold
 * a thread of libuv's small pool (shared with file, DNS and zlib work) and a core long after
 * `limits.fitTimeoutMs` answered the host. A child ends with its work, or with SIGKILL.
 *
 * The SVG's own size is read there too, from a parse: a few kilobytes of `<use>` nested in `<use>`
 * expand to millions of shapes, and that parse alone takes seconds and gigabytes — in the child,
 * not on the proxy's one thread, and freed with the child.
 *
 * No drawing outlives the proxy: children still running when it exits are killed, and one whose
 * proxy died without a word (SIGKILL) sees its stdin end — it draws off its main thread, so it
 * hears that — and exits (after the size parse, which runs on its main thread, if it is in it).
 *
 * The child is a few lines given to `node -e`, as CommonJS whatever NODE_OPTIONS says (the same
 * from the sources and the built package): one JSON line (fonts, the longest side wanted, the
 * SVG's length), then the SVG; it writes one JSON line (the SVG's own size), then the PNG.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";

const CHILD_SOURCE = `
const { Resvg, renderAsync } = require(process.argv[1]);
const fail = (why) => {
  process.stderr.write("Error: " + why + "\\n");
  process.exit(1);
};
const chunks = [];
let received = 0;
let header;
let started = false;
process.stdin.on("data", (chunk) => {
  if (started) return;
  chunks.push(chunk);
  received += chunk.length;
  if (header === undefined) {
    const head = Buffer.concat(chunks);
    const newline = head.indexOf(10);
    if (newline === -1) return;
    header = { ...JSON.parse(head.subarray(0, newline).toString("utf8")), at: newline + 1 };
  }
  if (received - header.at < header.length) return;
  started = true;
  const svg = Buffer.concat(chunks).subarray(header.at, header.at + header.length);
  let width;
  let height;
  try {
    const parsed = new Resvg(svg, { font: { loadSystemFonts: false }, logLevel: "off" });
    width = parsed.width;
    height = parsed.height;
  } catch (error) {
    return fail("SVG does not parse: " + (error instanceof Error ? error.message : String(error)));
  }
  if (!(width > 0 && height > 0)) return fail("SVG has no size");
  // Drawn at most maxDimension on its long side, at its own size when that is smaller.
  const scale = Math.min(1, header.maxDimension / Math.max(width, height));
  const fitTo =
    width >= height
      ? { mode: "width", value: Math.max(1, Math.round(width * scale)) }
      : { mode: "height", value: Math.max(1, Math.round(height * scale)) };
  renderAsync(svg, { font: header.font, fitTo, logLevel: "off" }).then(
    (image) => {
      process.stdout.write(JSON.stringify({ width, height }) + "\\n");
      process.stdout.end(image.asPng(), () => process.exit(0));
    },
    (error) => fail("SVG does not render: " + (error instanceof Error ? error.message : String(error))),
  );
});
// Its proxy is gone. Not process.exit: that waits for the drawing's thread to finish.
process.stdin.on("end", () => process.kill(process.pid, "SIGKILL"));
`;

/** Renderers running, killed if the proxy exits first. */
const running = new Set<ChildProcess>();
let killedOnExit = false;

/** Most of the child's stderr kept for the error it ends with. */
const STDERR_KEPT = 2048;

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

let resvgPath: string | undefined;

/** Renders `svg` (already made safe) in a child; rejects when it fails, or is killed by `signal`. */
export function renderSvgInChild(svg: string, options: SvgRenderOptions, signal?: AbortSignal): Promise<RenderedPng> {
  resvgPath ??= createRequire(import.meta.url).resolve("@resvg/resvg-js");
  // The PNG of a canvas whose long side is `maxDimension` at most: 4 bytes a pixel, plus framing.
  const maxBytes = 4 * options.maxDimension * options.maxDimension + 1024 * 1024;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("given up before it started"));
    const child = spawn(process.execPath, ["--input-type=commonjs", "-e", CHILD_SOURCE, resvgPath!], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    running.add(child);
    if (!killedOnExit) {
      killedOnExit = true;
      process.on("exit", () => {
        for (const renderer of running) renderer.kill("SIGKILL");
      });
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = "";
    let failure: string | undefined;
    const kill = (why: string): void => {
      failure ??= why;
      child.kill("SIGKILL");
    };
    const onAbort = (): void => kill("given up (limits.fitTimeoutMs)");
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxBytes) return kill(`its PNG is larger than ${maxBytes} bytes`);
      out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (err.length < STDERR_KEPT) err += chunk.toString("utf8").slice(0, STDERR_KEPT - err.length);
    });
    // A child that died before reading all of the SVG: its exit says why, not the broken pipe.
    child.stdin.on("error", () => {});
    child.on("error", (error) => kill(error.message));
    child.on("close", (code, killedBy) => {
      running.delete(child);
      signal?.removeEventListener("abort", onAbort);
      child.stdin.destroy();
      const written = Buffer.concat(out);
      const newline = written.indexOf(0x0a);
      const png = written.subarray(newline + 1);
      const size = newline === -1 ? undefined : sourceSize(written.subarray(0, newline));
      if (failure === undefined && code === 0 && size !== undefined && isPng(png))
        return resolve({
          png,
          width: png.readUInt32BE(16),
          height: png.readUInt32BE(20),
          sourceWidth: size.width,
          sourceHeight: size.height,
        });
      reject(new Error(failure ?? renderError(err, code, killedBy)));
    });
    // stdin stays open while the child draws: its end tells the child this process is gone.
    const bytes = Buffer.from(svg);
    const header = JSON.stringify({ ...options, length: bytes.length });
    child.stdin.write(Buffer.concat([Buffer.from(`${header}\n`), bytes]));
  });
}

/** The SVG's own size, as the child's first line gives it. */
function sourceSize(line: Buffer): { width: number; height: number } | undefined {
  try {
    const size = JSON.parse(line.toString("utf8")) as { width?: unknown; height?: unknown };
    return typeof size.width === "number" && typeof size.height === "number"
      ? { width: size.width, height: size.height }
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
