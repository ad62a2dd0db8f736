/**
 * SVG made safe to render: nothing in it may make the renderer read a file or the network.
 *
 * resvg never fetches URLs, but it does read local files named by `href` (absolute paths, and
 * paths relative to the working directory), and a nested SVG in a `data:` URI is rendered with
 * the same rules. So every `href` that is not a fragment (`#id`) or an inline raster image
 * (`data:image/png|jpeg|gif|webp`) is pointed at `#`, every CSS `url(…)` that is not a fragment
 * likewise, and a document type declaration is removed whole (its entities could spell out any
 * of the above where a pattern cannot see it; an SVG that then uses an entity fails to parse
 * and passes unchanged). An `href` counts whatever its namespace prefix is spelled with (XML
 * names take letters of any script: `é:href` bound to XLink is an `xlink:href`).
 *
 * Patterns over markup can be misled, so the result is checked again, failing closed: every
 * `href=` left in the text must start its value with `#` or an inline raster image, and no
 * document type declaration may be left; otherwise the SVG is not rendered at all.
 *
 * Every step is a scan that reads the text about once, never a pattern whose match may run to
 * the end of the text from each of many starts: a hostile SVG of unclosed `<!DOCTYPE [`, `href="`
 * or `url(` repeated would otherwise hold the event loop for seconds to minutes.
 */

const DOCTYPE_START = /<!DOCTYPE/gi;
/** The start of any attribute whose local name is `href`, with any prefix, up to its opening quote. */
const HREF_START = /(\s(?:[^\s=<>/"']*:)?href\s*=\s*)(["'])/gi;
/** `href=` as an attribute name ends: after whitespace or a prefix's colon (not `data-href`, not `[href=`). */
const ANY_HREF = /(?<=[\s:])href\s*=\s*/gi;
const DECLARATION = /<!(?:DOCTYPE|ENTITY)/i;
const CSS_URL_START = /url\(/gi;
const SAFE_DATA = /^data:image\/(?:png|jpeg|jpg|gif|webp)[;,]/i;

export interface SafeSvg {
  readonly svg: string;
  /** References pointed at `#` (and a doctype removed), for the record's reason. */
  readonly neutralized: number;
  /** False when the check after neutralizing still found a reference or a declaration: do not render. */
  readonly safe: boolean;
}

/** A value that names nothing outside the document: a fragment, or an inline PNG, JPEG, GIF or WebP. */
function isSafeTarget(value: string): boolean {
  return value.startsWith("#") || SAFE_DATA.test(value);
}

export function neutralizeSvg(source: string): SafeSvg {
  let neutralized = 0;
  const counted = (): void => {
    neutralized++;
  };
  let svg = removeDoctypes(source, counted);
  svg = neutralizeHrefs(svg, counted);
  svg = neutralizeCssUrls(svg, counted);
  return { svg, neutralized, safe: !DECLARATION.test(svg) && everyHrefSafe(svg) };
}

/**
 * Where the document type declaration at `start` (its `<!DOCTYPE`) ends — the index after its
 * `>` — or -1 when it never does. An internal subset (`[…]`) ends at the first `]` that
 * whitespace and `>` follow.
 */
export function doctypeEnd(text: string, start: number): number {
  let i = start + "<!DOCTYPE".length;
  while (i < text.length && text[i] !== ">" && text[i] !== "[") i++;
  if (i >= text.length) return -1;
  if (text[i] === ">") return i + 1;
  for (let close = text.indexOf("]", i); close !== -1; close = text.indexOf("]", close + 1)) {
    let after = close + 1;
    while (after < text.length && /\s/.test(text[after]!)) after++;
    if (text[after] === ">") return after + 1;
  }
  return -1;
}

/** Where a scan goes on, and what (if anything) replaces a stretch of the text it found. */
interface ScanStep {
  readonly next: number;
  readonly replace?: { readonly from: number; readonly to: number; readonly text: string };
}

/**
 * `svg` read once: each match of `start` (a global pattern) is handed to `step`, which says what
 * replaces what it found and where the scan goes on — or null for one that never ends, after
 * which the rest is left as it is (and fails the check after).
 */
function rewriteScan(
  svg: string,
  start: RegExp,
  step: (match: RegExpExecArray) => ScanStep | null,
  counted: () => void,
): string {
  let out = "";
  let from = 0;
  start.lastIndex = 0;
  for (let match = start.exec(svg); match !== null; match = start.exec(svg)) {
    const found = step(match);
    if (found === null) break;
    if (found.replace !== undefined) {
      out += svg.slice(from, found.replace.from) + found.replace.text;
      from = found.replace.to;
      counted();
    }
    start.lastIndex = found.next;
  }
  return out + svg.slice(from);
}

/** Every document type declaration taken out. */
function removeDoctypes(svg: string, counted: () => void): string {
  return rewriteScan(
    svg,
    DOCTYPE_START,
    (match) => {
      const end = doctypeEnd(svg, match.index);
      return end === -1 ? null : { next: end, replace: { from: match.index, to: end, text: "" } };
    },
    counted,
  );
}

/** Every `href` value that is not a safe target as `#`. */
function neutralizeHrefs(svg: string, counted: () => void): string {
  return rewriteScan(
    svg,
    HREF_START,
    (match) => {
      const valueStart = match.index + match[0].length;
      const close = svg.indexOf(match[2]!, valueStart);
      if (close === -1) return null;
      if (isSafeTarget(svg.slice(valueStart, close))) return { next: close + 1 };
      return { next: close + 1, replace: { from: valueStart, to: close, text: "#" } };
    },
    counted,
  );
}

/** Every CSS `url(…)` that is not a fragment as `url(#)`. */
function neutralizeCssUrls(svg: string, counted: () => void): string {
  return rewriteScan(
    svg,
    CSS_URL_START,
    (match) => {
      const close = svg.indexOf(")", match.index + 4);
      if (close === -1) return null;
      const value = svg
        .slice(match.index + 4, close)
        .trim()
        .replace(/^["']/, "");
      if (value.trimStart().startsWith("#")) return { next: close + 1 };
      return { next: close + 1, replace: { from: match.index, to: close + 1, text: "url(#)" } };
    },
    counted,
  );
}

/** Every `href=` in `svg`, wherever it stands, opens a quoted value that is a safe target. */
function everyHrefSafe(svg: string): boolean {
  for (const match of svg.matchAll(ANY_HREF)) {
    const at = (match.index ?? 0) + match[0].length;
    const quote = svg[at];
    if (quote !== '"' && quote !== "'") return false;
    if (!isSafeTarget(svg.slice(at + 1, at + 40))) return false;
  }
  return true;
}

/** Text needs fonts: system fonts are loaded only for an SVG that has text to draw. */
export function svgHasText(svg: string): boolean {
  return /<(?:[\w-]+:)?text[\s>]/i.test(svg);
}
