/**
 * Token estimates for `audit --tokens`: hosts that pay per token pay most for base64.
 * gpt-tokenizer ships its BPE ranks inside the npm package (nothing fetched at run time); we use
 * `o200k_base`, the encoding of OpenAI's GPT-4o, GPT-4.1 and o-series models. Other vendors'
 * tokenizers differ; the numbers are an estimate of the order of magnitude, stated as such.
 */
import { tokenPieces } from "./tokenPieces.js";

export const TOKEN_ENCODING = "o200k_base";
export const TOKEN_NOTE =
  "o200k_base is the encoding of OpenAI GPT-4o / GPT-4.1 / o-series; other models' tokenizers differ, so treat these " +
  "as estimates.";

/** Tokens in a text; asynchronous, so that counting a large entry leaves room for signals. */
export type TokenCounter = (text: string) => Promise<number>;

/** Loaded on demand: the encoding's tables take a moment to parse, and only `--tokens` needs them. */
export async function loadTokenCounter(): Promise<TokenCounter> {
  const { countTokens, setMergeCacheSize } = await import("gpt-tokenizer/encoding/o200k_base");
  // Its cache of merged words, once full of an audit's varied text, makes each new long word
  // cost a pass over the cache: a run of one letter after many distinct words crawled. Without
  // it every piece costs time in proportion to its length, and memory stays flat.
  setMergeCacheSize(0);
  // A server's text may hold "<|endoftext|>" and the like: counted as the text it is (the
  // tokenizer's default refuses it with an error, which failed the read).
  const asText = { disallowedSpecial: new Set<string>() };
  return (text) => countInPieces(text, (piece) => countTokens(piece, asText));
}

/**
 * The sum of the pieces' counts, the event loop given a turn after each piece: a SIGTERM or
 * SIGINT during a large entry is handled at once, not when the entry is done. A piece the same as
 * the one before (a run of one letter, base64 of zeros: cut hard, every piece alike) is not
 * counted again — without the tokenizer's cache each costs time in proportion to its length.
 */
export async function countInPieces(text: string, count: (piece: string) => number): Promise<number> {
  let total = 0;
  let last: string | undefined;
  let lastCount = 0;
  for (const piece of tokenPieces(text)) {
    if (piece !== last) {
      last = piece;
      lastCount = count(piece);
    }
    total += lastCount;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return total;
}
