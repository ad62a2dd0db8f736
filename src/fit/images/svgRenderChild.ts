/**
 * An SVG rendered to PNG in a child process of its own, killed when the fit is given up. resvg's
 * render cannot be stopped once it runs (its abort only drops the result), and a few kilobytes of
 * SVG — filtered shapes repeated — can keep it drawing for minutes: in this process it would hold
 * a thread of libuv's small pool (shared with file, DNS and zlib work) and a core long after
 * `limits.fitTimeoutMs` answered the host. A child ends with its work, or with SIGKILL.
 *
 * No drawing outlives the proxy: children still running when it exits are killed, and one whose
 * proxy died without a word (SIGKILL) sees its stdin end — it draws off its main thread, so it
 * hears that — and exits.
 *
 * The child is a few lines given to `node -e`, as CommonJS whatever NODE_OPTIONS says (the same
 * from the sources and the built package): one JSON line (resvg's options, the SVG's length),
 * then the SVG; it writes the PNG.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";

const CHILD_SOURCE = `
const { renderAsync } = require(process.argv[1]);
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
  const input = Buffer.concat(chunks);
  renderAsync(input.subarray(header.at, header.at + header.length), header.options).then(
    (image) => process.stdout.end(image.asPng(), () => process.exit(0)),
    (error) => {
      process.stderr.write(String(error) + "\\n");
      process.exit(1);
    },
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
  readonly fitTo: { readonly mode: "width" | "height"; readonly value: number };
}

export interface RenderedPng {
  readonly png: Buffer;
  readonly width: number;
  readonly height: number;
}

let resvgPath: string | undefined;

/** Renders `svg` (already made safe) in a child; rejects when it fails, or is killed by `signal`. */
export function renderSvgInChild(svg: string, options: SvgRenderOptions, signal?: AbortSignal): Promise<RenderedPng> {
  resvgPath ??= createRequire(import.meta.url).resolve("@resvg/resvg-js");
  // The PNG of a canvas whose long side is `fitTo.value`: 4 bytes a pixel at most, plus framing.
  const maxBytes = 4 * options.fitTo.value * options.fitTo.value + 1024 * 1024;
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
      const png = Buffer.concat(out);
      if (failure === undefined && code === 0 && isPng(png))
        return resolve({ png, width: png.readUInt32BE(16), height: png.readUInt32BE(20) });
      reject(new Error(failure ?? renderError(err, code, killedBy)));
    });
    // stdin stays open while the child draws: its end tells the child this process is gone.
    const bytes = Buffer.from(svg);
    const header = JSON.stringify({ options: { ...options, logLevel: "off" }, length: bytes.length });
    child.stdin.write(Buffer.concat([Buffer.from(`${header}\n`), bytes]));
  });
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
  return lines[0] ?? (signal !== null ? `the renderer ended by ${signal}` : `the renderer exited with ${code}`);
}
