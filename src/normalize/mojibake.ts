/**
 * Whether decoded text bears the marks of bytes read in the wrong charset ("mojibake"). In
 * natural writing, what stands between two letters of a word is a letter, a combining mark or
 * joining punctuation (apostrophe, hyphen, middle dot, geresh); a symbol does not touch a letter
 * outside ASCII; a word keeps to one script; and a word does not turn from lowercase to
 * uppercase halfway. Text read in a sibling of its real charset breaks one of these at the bytes
 * where the two charsets differ: "c½ur" for "cœur", "Grš§ere" for "Größere", "¬се" for "Все",
 * "рождаютсЯ" for "рождаются". Only characters outside ASCII are judged: ASCII reads the same
 * in every charset the check is asked about, and code writes "a+b" or "camelCase" on purpose.
 */

const LETTER = 1;
const UPPER = 2;
const LOWER = 4;
const LATIN = 8;
/** A symbol or number sign (currency, math, box drawing, ½, ²…). */
const SYMBOL = 16;
/** Typographic marks that stand beside words, never between two letters of one (§ † • ‰ « »…). */
const MARK = 32;
const OUTSIDE_ASCII = 64;

const SYMBOL_CHARACTER = /[\p{S}\p{No}\p{Nl}]/u;
const MARK_CHARACTER = /[§¶†‡•‰¡¿«»‹›]/u;

function classOf(ch: string): number {
  let found = ch.charCodeAt(0) > 0x7f ? OUTSIDE_ASCII : 0;
  if (/\p{L}/u.test(ch)) {
    found |= LETTER;
    if (/\p{Lu}|\p{Lt}/u.test(ch)) found |= UPPER;
    if (/\p{Ll}/u.test(ch)) found |= LOWER;
    if (/\p{sc=Latin}/u.test(ch)) found |= LATIN;
  } else if (SYMBOL_CHARACTER.test(ch)) found |= SYMBOL;
  else if (MARK_CHARACTER.test(ch)) found |= MARK;
  return found;
}

/** The class of each UTF-16 code unit, worked out when first met. */
const codeUnitClasses = new Map<number, number>();
function classOfCodeUnit(unit: number): number {
  let found = codeUnitClasses.get(unit);
  if (found === undefined) {
    found = unit >= 0xd800 && unit <= 0xdfff ? OUTSIDE_ASCII : classOf(String.fromCharCode(unit));
    codeUnitClasses.set(unit, found);
  }
  return found;
}

/** Whether two neighbours, both outside ASCII, or a letter turning to uppercase, are a mark of a wrong charset. */
function pairMisdecoded(before: number, after: number): boolean {
  if ((before & LOWER) !== 0 && (after & UPPER) !== 0 && ((before | after) & OUTSIDE_ASCII) !== 0) return true;
  if ((before & after & OUTSIDE_ASCII) === 0) return false;
  const letters = before & after & LETTER;
  if (letters !== 0) return ((before ^ after) & LATIN) !== 0;
  return ((before & SYMBOL) !== 0 && (after & LETTER) !== 0) || ((before & LETTER) !== 0 && (after & SYMBOL) !== 0);
}

/** The check over `length` characters whose classes `classAt` gives. */
function classesMisdecoded(length: number, classAt: (index: number) => number): boolean {
  let twoBefore = 0;
  let before = 0;
  for (let i = 0; i < length; i++) {
    const current = classAt(i);
    if (pairMisdecoded(before, current)) return true;
    const between = (before & OUTSIDE_ASCII) !== 0 && (before & (SYMBOL | MARK)) !== 0;
    if (between && (twoBefore & LETTER) !== 0 && (current & LETTER) !== 0) return true;
    twoBefore = before;
    before = current;
  }
  return false;
}

export function looksMisdecoded(text: string): boolean {
  return classesMisdecoded(text.length, (i) => classOfCodeUnit(text.charCodeAt(i)));
}

/** The classes of what each byte reads as, for a single-byte charset's 256-character table. */
export function byteClasses(table: string): Uint8Array {
  return Uint8Array.from({ length: 256 }, (_, byte) => classOfCodeUnit(table.charCodeAt(byte)));
}

/** `looksMisdecoded` of what `bytes` read as in a single-byte charset, without decoding them. */
export function bytesLookMisdecoded(bytes: Uint8Array, classes: Uint8Array): boolean {
  return classesMisdecoded(bytes.length, (i) => classes[bytes[i]!]!);
}
