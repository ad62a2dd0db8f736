/**
 * The child processes an SVG is drawn in (`node --input-type=commonjs -e …`), found by their
 * parent; and an SVG that keeps one drawing for long seconds.
 */
import { execFileSync } from "node:child_process";

/** Pids of `parent`'s children drawing an SVG. */
export function svgRenderersOf(parent: number = process.pid): number[] {
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(parent)], { encoding: "utf8" });
  } catch {
    // ps exits 1 when there are none.
  }
  return out
    .split("\n")
    .filter((line) => line.includes("--input-type=commonjs"))
    .map((line) => Number.parseInt(line.trim(), 10));
}

/** Blurred squares repeated: resvg draws each for long seconds, a few kilobytes in all. */
export const SLOW_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="1500" height="1500"><filter id="f" x="-50" y="-50" ' +
  `width="100" height="100"><feGaussianBlur stdDeviation="500"/></filter>${'<rect width="1500" height="1500" filter="url(#f)"/>'.repeat(50)}</svg>`;
