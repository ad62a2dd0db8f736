/**
 * Response bodies a server compressed though it was not asked to. The proxy sends no
 * `accept-encoding`, yet a request without one accepts any coding (RFC 9110 §12.5.3), and some
 * servers and CDNs compress anyway: gzip, deflate (zlib-wrapped or raw) and br are decoded, as
 * `fetch` decodes them.
 */
import type { IncomingMessage } from "node:http";
import { PassThrough, type Readable, type Transform } from "node:stream";
import { constants as zlib, createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from "node:zlib";
import { fetchFailed } from "./upstreamMessages.js";

/**
 * What a response body reads as: the response itself, or — for a body a server compressed though
 * it was not asked to — decoders on it, the last coding applied first (`gzip, br`); an Error for a
 * coding Node cannot decode. Decoded as `fetch` decodes: a body cut before its end (no gzip
 * trailer, a stream that stops) gives what it held, and an empty one is empty.
 */
export function decoded(res: IncomingMessage): IncomingMessage | Transform | Error {
  const header = res.headers["content-encoding"];
  if (header === undefined) return res;
  const codings = header
    .toLowerCase()
    .split(",")
    .map((coding) => coding.trim())
    .filter((coding) => coding !== "" && coding !== "identity");
  if (codings.length === 0) return res;
  const unknown = codings.find((coding) => !DECODABLE.has(coding));
  if (unknown !== undefined)
    return fetchFailed(
      new Error(`the upstream answered in Content-Encoding "${unknown.slice(0, 40)}", which cannot be decoded`),
    );
  let out: IncomingMessage | Transform = res;
  for (const coding of codings.reverse()) {
    const input: Readable = out;
    const next = coding === "deflate" ? inflateEither(input) : input.pipe(decoderFor(coding));
    if (input !== res) input.on("error", (error: Error) => next.destroy(error));
    out = next;
  }
  return out;
}

const DECODABLE = new Set(["gzip", "x-gzip", "deflate", "br"]);
const FLUSH = { flush: zlib.Z_SYNC_FLUSH, finishFlush: zlib.Z_SYNC_FLUSH };

/** The decoder of a coding other than deflate (`inflateEither`): br, or gzip (`x-gzip` too). */
function decoderFor(coding: string): Transform {
  if (coding === "br")
    return createBrotliDecompress({
      flush: zlib.BROTLI_OPERATION_FLUSH,
      finishFlush: zlib.BROTLI_OPERATION_FLUSH,
    });
  return createGunzip(FLUSH);
}

/**
 * `deflate` as servers send it: zlib-wrapped as the RFC says, or raw, as many do. Told apart by
 * the first byte (a zlib header's low bits name the method, 8), as `fetch` tells them apart.
 */
function inflateEither(input: Readable): Transform {
  const out = new PassThrough();
  let chosen = false;
  const choose = (): void => {
    if (out.destroyed) return; // cancelled before its first byte
    const first: Buffer | null = input.read();
    if (first === null || first.length === 0) return void input.once("readable", choose);
    chosen = true;
    input.unshift(first);
    const inflate = (first[0]! & 0x0f) === 0x08 ? createInflate(FLUSH) : createInflateRaw(FLUSH);
    inflate.on("error", (error) => out.destroy(error));
    input.pipe(inflate).pipe(out);
  };
  input.once("readable", choose);
  input.once("end", () => {
    if (!chosen) out.end();
  });
  return out;
}
