/**
 * Response bodies a server compressed though it was not asked to. The proxy sends no
 * `accept-encoding`, yet a request without one accepts any coding (RFC 9110 §12.5.3), and some
 * servers and CDNs compress anyway: gzip, deflate and br are decoded, as `fetch` decodes them.
 */
import type { IncomingMessage } from "node:http";
import type { Transform } from "node:stream";
import { constants as zlib, createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
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
  const decoders: Transform[] = [];
  for (const coding of codings.reverse()) {
    const decoder = decoderFor(coding);
    if (decoder === undefined)
      return fetchFailed(
        new Error(`the upstream answered in Content-Encoding "${coding.slice(0, 40)}", which cannot be decoded`),
      );
    decoders.push(decoder);
  }
  let out: IncomingMessage | Transform = res;
  for (const decoder of decoders) {
    if (out !== res) out.on("error", (error) => decoder.destroy(error));
    out = out.pipe(decoder);
  }
  return out;
}

function decoderFor(coding: string): Transform | undefined {
  const flush = { flush: zlib.Z_SYNC_FLUSH, finishFlush: zlib.Z_SYNC_FLUSH };
  if (coding === "gzip" || coding === "x-gzip") return createGunzip(flush);
  if (coding === "deflate") return createInflate(flush);
  if (coding === "br")
    return createBrotliDecompress({
      flush: zlib.BROTLI_OPERATION_FLUSH,
      finishFlush: zlib.BROTLI_OPERATION_FLUSH,
    });
  return undefined;
}
