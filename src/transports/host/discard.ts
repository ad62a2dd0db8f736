/**
 * What a peer sends after the proxy has answered it without reading on (a refusal, a preflight,
 * an upgrade refused before `ws` takes it) is read and thrown away — up to `MIN_DISCARD_BYTES`,
 * for at most `closeTimeoutMs` — so the peer can read the answer instead of a reset; then its
 * connection is cut. Nobody makes the proxy read gigabytes, or hold a connection, that way.
 */
import { MIN_DISCARD_BYTES } from "./readMessageBody.js";

interface Discarded {
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  once(event: "end" | "close", listener: () => void): unknown;
}

/**
 * Starts throwing away what `from` reads, up to `maxBytes`; returns the cut (for a caller that
 * knows sooner).
 */
export function discardThenCut(
  from: Discarded,
  socket: { destroy(): void },
  closeTimeoutMs: number,
  maxBytes = MIN_DISCARD_BYTES,
): () => void {
  const timer = setTimeout(() => socket.destroy(), closeTimeoutMs);
  timer.unref();
  const cut = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  let read = 0;
  from.on("data", (chunk: Buffer) => {
    read += chunk.length;
    if (read > maxBytes) cut();
  });
  from.once("end", () => clearTimeout(timer));
  from.once("close", () => clearTimeout(timer));
  return cut;
}
