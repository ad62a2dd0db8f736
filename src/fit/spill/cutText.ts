/**
 * Cutting text into pieces of at most N UTF-8 bytes that concatenate back to the very same
 * string: never inside a character (a surrogate pair is one character), and at a grapheme
 * boundary (an emoji sequence, a letter with its combining marks) whenever one lies near.
 */

/** How far back (in UTF-16 units) a grapheme boundary is looked for before a plain character cut. */
const GRAPHEME_WINDOW = 64;
let segmenter: Intl.Segmenter | undefined;

/** UTF-8 bytes of `text[from, to)`; a lone surrogate counts 3 (what an encoder writes for it). */
export function utf8Bytes(text: string, from = 0, to = text.length): number {
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < to && isLow(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The end of the longest piece starting at `start` of at most `maxBytes` bytes (`text.length`
 * when the rest fits; `start` when not even one character fits).
 */
export function cutEnd(text: string, start: number, maxBytes: number): number {
  let bytes = 0;
  let i = start;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    let width = 1;
    let size = code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
      width = 2;
      size = 4;
    }
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += width;
  }
  if (i >= text.length || i === start) return i;
  return graphemeBoundaryBefore(text, start, i);
}

/**
 * Boundaries of consecutive pieces from `start`: [start, b1, b2, …, text.length]. A piece holds
 * at least one character, even one wider than `maxBytes` (only possible under 4 bytes).
 */
export function pageBounds(text: string, start: number, maxBytes: number): number[] {
  const bounds = [start];
  let at = start;
  while (at < text.length) {
    const end = cutEnd(text, at, maxBytes);
    at = end === at ? forceOne(text, at) : end;
    bounds.push(at);
  }
  return bounds;
}

/**
 * Page boundaries for the texts of several blocks joined (`parts`: where each after the first
 * starts), each block's piece of a page an entry of its own: a page holds at most `maxBytes`,
 * counting `entryBytes` for each entry it holds — thousands of one-letter blocks make pages of
 * fewer letters, not answers many times `maxBytes` — and at least one character.
 */
export function runPageBounds(text: string, parts: readonly number[], maxBytes: number, entryBytes: number): number[] {
  const ends = [...parts, text.length];
  const bounds = [0];
  let at = 0;
  let k = 0;
  while (at < text.length) {
    const pageStart = at;
    let budget = maxBytes;
    while (at < text.length) {
      while (ends[k]! <= at) k++;
      const end = ends[k]!;
      budget -= entryBytes;
      // The block's rest fits: taken whole (its bytes counted only when its length says it might).
      if (end - at <= budget) {
        const bytes = utf8Bytes(text, at, end);
        if (bytes <= budget) {
          budget -= bytes;
          at = end;
          continue;
        }
      }
      const cut = budget > 0 ? Math.min(cutEnd(text, at, budget), end) : at;
      if (cut > at) at = cut;
      else if (at === pageStart) at = Math.min(forceOne(text, at), end);
      break;
    }
    bounds.push(at);
  }
  return bounds;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Whether a regional indicator (U+1F1E6–U+1F1FF, half of a flag) starts at `i`. */
function isRegionalIndicatorAt(text: string, i: number): boolean {
  const low = text.charCodeAt(i + 1);
  return text.charCodeAt(i) === 0xd83c && low >= 0xdde6 && low <= 0xddff;
}

/** One character even when it is wider than the budget (a budget under 4 bytes). */
function forceOne(text: string, i: number): number {
  const code = text.charCodeAt(i);
  return code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? i + 2 : i + 1;
}

/** The last grapheme boundary in (start, end]; `end` itself when none is near. */
function graphemeBoundaryBefore(text: string, start: number, end: number): number {
  // Between two characters below U+0300 every position is a boundary but inside CR LF: nothing
  // there extends, joins or pairs with a neighbour. Latin text is cut without the segmenter.
  const last = text.charCodeAt(end - 1);
  const next = text.charCodeAt(end);
  if (last < 0x300 && next < 0x300 && !(last === 0x0d && next === 0x0a)) return end;
  let from = Math.max(start, end - GRAPHEME_WINDOW);
  if (from > start && isLow(text.charCodeAt(from))) from--;
  // Regional indicators pair into flags counting from the start of their run: a window starting
  // after an odd number of them would pair them off by one. Counted back to the run's start, or
  // to the piece's own start (a boundary); the window moves back one if the count is odd, and
  // stays short (the segmenter slows down far worse than linearly on long runs of them).
  let before = 0;
  for (let i = from - 2; i >= start && isRegionalIndicatorAt(text, i); i -= 2) before++;
  if (before % 2 === 1) from -= 2;
  const to = Math.min(text.length, end + GRAPHEME_WINDOW);
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  let best = -1;
  for (const { index } of segmenter.segment(text.slice(from, to))) {
    const at = from + index;
    if (at > end) break;
    // The window's first position is a boundary only if it is the piece's own start.
    if (at > start && (at > from || from === start)) best = at;
  }
  return best > start ? best : end;
}
