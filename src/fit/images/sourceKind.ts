/**
 * Which decoder an image's bytes go to, read from the bytes themselves (never from the declared
 * type, which servers get wrong): sharp for the raster formats libvips reads, our own decoder for BMP,
 * decode-ico for icons, resvg for SVG. SVG is never handed to sharp: its librsvg would resolve
 * references to local files.
 */
import { detectSignature } from "../../normalize/signature.js";
import { doctypeEnd } from "./svgSafety.js";

export type SourceKind =
  | { readonly decoder: "sharp"; readonly mime: string; readonly lossy: boolean }
  | { readonly decoder: "bmp"; readonly mime: "image/bmp"; readonly lossy: false }
  | { readonly decoder: "ico"; readonly mime: "image/x-icon"; readonly lossy: false }
  | { readonly decoder: "svg"; readonly mime: "image/svg+xml"; readonly lossy: false };

/** Raster formats sharp decodes, and whether they are usually lossy (photos). */
const SHARP_FORMATS: ReadonlyMap<string, boolean> = new Map([
  ["image/png", false],
  ["image/jpeg", true],
  ["image/gif", false],
  ["image/webp", true],
  ["image/tiff", false],
  ["image/avif", true],
  ["image/heic", true],
]);

/** How far into the bytes an SVG root element is looked for (after the prolog, comments, a doctype). */
const SVG_HEAD_BYTES = 4096;

export function sourceKind(bytes: Buffer): SourceKind | null {
  const sig = detectSignature(bytes.subarray(0, 512));
  if (sig !== null) {
    const lossy = SHARP_FORMATS.get(sig.mime);
    if (lossy !== undefined) return { decoder: "sharp", mime: sig.mime, lossy };
    if (sig.mime === "image/bmp") return { decoder: "bmp", mime: "image/bmp", lossy: false };
    if (sig.mime === "image/x-icon") return { decoder: "ico", mime: "image/x-icon", lossy: false };
    return null;
  }
  return looksLikeSvg(bytes) ? { decoder: "svg", mime: "image/svg+xml", lossy: false } : null;
}

/**
 * Whether the root element is `<svg`, with only markup before it: an XML declaration,
 * processing instructions, comments, a doctype, whitespace. A scan, not one pattern: a pattern
 * with whitespace runs inside a repeated group took time exponential in their length (34
 * spaces: seconds on the event loop).
 */
function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes
    .subarray(0, SVG_HEAD_BYTES)
    .toString("utf8")
    .replace(/^\uFEFF/, "");
  let i = 0;
  while (i < head.length) {
    let end: number;
    if (/\s/.test(head[i]!)) end = i + 1;
    else if (head.startsWith("<?", i)) end = after(head, "?>", i + 2);
    else if (head.startsWith("<!--", i)) end = after(head, "-->", i + 4);
    else if (head.slice(i, i + 9).toUpperCase() === "<!DOCTYPE") end = doctypeEnd(head, i);
    else return /^<svg[\s>]/i.test(head.slice(i, i + 5));
    if (end === -1) return false;
    i = end;
  }
  return false;
}

/** The index after the first `close` from `from`, or -1. */
function after(text: string, close: string, from: number): number {
  const at = text.indexOf(close, from);
  return at === -1 ? -1 : at + close.length;
}
