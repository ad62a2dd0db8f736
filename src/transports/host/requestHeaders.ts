/**
 * Reading what a host's HTTP request says about itself: which response form it accepts. (Which
 * client it comes from: clientAddress.ts; which of its headers go upstream: ../mcpHeaders.ts.)
 */
import { parseMediaType } from "../../normalize/mediaType.js";

/**
 * Which forms of answer a host's `Accept` allows for a POSTed request: streamable HTTP lets the
 * server answer with an SSE stream or one JSON body (MCP 2025-06-18 basic/transports §"Sending
 * Messages to the Server"), and the client MUST support both. "either" lets the session choose
 * (it answers JSON when nothing else is sent first, see streamableHttpHost.ts); "sse" and "json"
 * are what a host accepting only one of them gets. No `Accept` at all accepts any media type
 * (RFC 9110 §12.5.1), as does the range of all types. Media ranges are parsed, not substring
 * matched; a range with `q=0` is a refusal. A header allowing neither gets SSE.
 */
export function responseForm(accept: string | undefined): "sse" | "json" | "either" {
  if (accept === undefined || accept.trim() === "") return "either";
  const { json, sse } = acceptedForms(accept);
  if (json && sse) return "either";
  return json ? "json" : "sse";
}

/**
 * Whether a host's `Accept` lets a GET be answered with an SSE stream: the spec's client MUST
 * list `text/event-stream`, and a header that rules it out is answered 406 rather than with a
 * stream the host said it cannot read. No `Accept` at all accepts any media type.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === "") return true;
  return acceptedForms(accept).sse;
}

function acceptedForms(accept: string): { json: boolean; sse: boolean } {
  const ranges: Array<{ essence: string; q: number }> = [];
  for (const range of accept.split(",")) {
    const mt = parseMediaType(range.trim());
    if (mt === null) continue;
    const q = mt.params.find(([name]) => name === "q")?.[1];
    const quality = q === undefined ? 1 : Number(q);
    ranges.push({ essence: mt.essence, q: Number.isFinite(quality) ? quality : 1 });
  }
  return { json: accepts(ranges, "application", "json"), sse: accepts(ranges, "text", "event-stream") };
}

/**
 * Whether `type/subtype` is acceptable: the most specific range that matches it decides (RFC 9110
 * §12.5.1: `text/event-stream;q=0` beside the range of all types rules the stream out), and a
 * `q` of 0 is a refusal (a `q` that is no number is left out, as if not given).
 */
function accepts(ranges: ReadonlyArray<{ essence: string; q: number }>, type: string, subtype: string): boolean {
  let best: { specificity: number; q: number } | undefined;
  for (const { essence, q } of ranges) {
    const specificity = essence === `${type}/${subtype}` ? 3 : essence === `${type}/*` ? 2 : essence === "*/*" ? 1 : 0;
    if (specificity > 0 && (best === undefined || specificity > best.specificity)) best = { specificity, q };
  }
  return best !== undefined && best.q > 0;
}
