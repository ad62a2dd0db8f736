/**
 * The pieces `audit --tokens` hands the tokenizer. Byte-pair encoding takes time quadratic in
 * the length of a stretch with no break in it (a blob of zeros decoded, a long run of one
 * letter), and it runs without giving way to signals; cut into pieces of bounded size, an entry
 * of any size costs time in proportion to its length, with a pause between pieces.
 */

/**
 * Longest piece, in UTF-16 code units: short enough that one stretch with no break is encoded
 * at once without a noticeable stall, long enough that ordinary text is cut rarely.
 */
export const TOKEN_PIECE_CHARS = 1000;
/** How far back from a piece's end a break is looked for before cutting hard. */
const BREAK_WINDOW_CHARS = 200;

const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

/**
 * The text in pieces of at most `size` code units, in order; joined they are the text. A piece
 * ends, where it can, just before a space or punctuation that follows a letter or digit: the
 * tokenizer splits its input there itself, so the counts of the pieces add up to the count of
 * the whole. With no such break near the end the piece is cut hard (never inside a surrogate
 * pair), and the sum may differ by a token or so at that cut.
 */
export function* tokenPieces(text: string, size = TOKEN_PIECE_CHARS): Generator<string> {
  let start = 0;
  while (text.length - start > size) {
    const end = cutAt(text, start + size, Math.max(start + 1, start + size - BREAK_WINDOW_CHARS));
    yield text.slice(start, end);
    start = end;
  }
  if (start < text.length || text.length === 0) yield text.slice(start);
}

/** The last break in (`floor`, `limit`]; else `limit`, moved back one if it would split a surrogate pair. */
function cutAt(text: string, limit: number, floor: number): number {
  for (let i = limit; i > floor; i--) {
    if (!WORD_CHAR.test(text.charAt(i)) && WORD_CHAR.test(text.charAt(i - 1)) && !isLowSurrogate(text, i)) return i;
  }
  return isLowSurrogate(text, limit) ? limit - 1 : limit;
}

function isLowSurrogate(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  return code >= 0xdc00 && code <= 0xdfff;
}
