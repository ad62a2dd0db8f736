/**
 * An SVG rendered to PNG in a child process of its own, killed when the fit is given up. resvg's
 * render cannot be stopped once it runs (its abort only drops the result), and a few kilobytes of
 * SVG — filtered shapes repeated — can keep it drawing for minutes: in this process it would hold
 * a thread of libuv's small pool (shared with file, DNS and zlib work) and a core long after
 * `limits.fitTimeoutMs` answered the host. A child ends with its work, or with SIGKILL.
 *
 * The child is a few lines given to `node -e` (the same from the sources and the built package):
 * it reads one JSON line of resvg options, then the SVG, and writes the PNG.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";

const CHILD_SOURCE = `
const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk)).on("end", () => {
  const input = Buffer.concat(chunks);
  const newline = input.indexOf(10);
  const options = JSON.parse(input.subarray(0, newline).toString("utf8"));
  const { Resvg } = require(process.argv[1]);
  process.stdout.end(new Resvg(input.subarray(newline + 1), options).render().asPng());
});
`;

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
    const child = spawn(process.execPath, ["-e", CHILD_SOURCE, resvgPath!], { stdio: ["pipe", "pipe", "pipe"] });
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
      signal?.removeEventListener("abort", onAbort);
      const png = Buffer.concat(out);
      if (failure === undefined && code === 0 && isPng(png))
        return resolve({ png, width: png.readUInt32BE(16), height: png.readUInt32BE(20) });
      reject(new Error(failure ?? renderError(err, code, killedBy)));
    });
    child.stdin.end(
      Buffer.concat([Buffer.from(`${JSON.stringify({ ...options, logLevel: "off" })}\n`), Buffer.from(svg)]),
    );
  });
}

/** A PNG's signature and its IHDR chunk (which holds the width and height) are there. */
function isPng(bytes: Buffer): boolean {
  return bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.toString("latin1", 12, 16) === "IHDR";
}

/** The last line of what the child wrote on stderr (its error), else how it ended. */
function renderError(stderr: string, code: number | null, signal: NodeJS.Signals | null): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /^(\w*Error|Error)\b/.test(line));
  return lines[0] ?? (signal !== null ? `the renderer ended by ${signal}` : `the renderer exited with ${code}`);
}
