/**
 * One Server-Sent Events stream on an HTTP response (WHATWG HTML §9.2, as used by MCP's
 * streamable HTTP and legacy HTTP+SSE transports).
 *
 * A message is written as three writes under one cork (`event:`/`data:` prefix, the serialized
 * JSON — its pieces, when it carries raw strings — the blank line), so a 50 MiB message is never concatenated into a second 50 MiB
 * string. `JSON.stringify` never emits CR or LF, so one `data:` line always suffices.
 * `write` resolves after `drain` when the socket is behind: that is the backpressure the proxy
 * waits on before it hands over the next message.
 */
import type { ServerResponse } from "node:http";
import { writeWire, type WireJson } from "../wireJson.js";

/** Default interval of `: keepalive` comments that keep idle proxies from cutting the stream. */
export const DEFAULT_SSE_KEEP_ALIVE_MS = 15_000;

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  // Tells nginx-style reverse proxies not to buffer the stream.
  "x-accel-buffering": "no",
} as const;

export class SseWriter {
  private ended = false;
  private readonly keepAlive: NodeJS.Timeout | undefined;
  private readonly closeListeners: Array<() => void> = [];

  /** Sends status 200 and the SSE headers at once, so the client sees the stream open. */
  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string> = {},
    keepAliveMs: number = DEFAULT_SSE_KEEP_ALIVE_MS,
  ) {
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    res.flushHeaders();
    res.on("close", () => this.markEnded());
    if (keepAliveMs > 0) {
      this.keepAlive = setInterval(() => {
        if (!this.ended) res.write(": keepalive\n\n");
      }, keepAliveMs);
      this.keepAlive.unref();
    }
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  /** Called once when the stream ends, whichever side ended it. */
  onEnded(listener: () => void): void {
    if (this.ended) listener();
    else this.closeListeners.push(listener);
  }

  /** Writes one event; resolves when the socket can take more (or the stream is gone). */
  write(event: string, data: WireJson): Promise<void> {
    if (this.ended) return Promise.resolve();
    const res = this.res;
    res.cork();
    res.write(`event: ${event}\ndata: `);
    writeWire(res, data);
    const ready = res.write("\n\n");
    process.nextTick(() => res.uncork());
    if (ready) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        res.off("drain", done);
        res.off("close", done);
        resolve();
      };
      res.on("drain", done);
      res.on("close", done);
    });
  }

  end(): void {
    if (this.ended) return;
    this.res.end();
    this.markEnded();
  }

  private markEnded(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.keepAlive !== undefined) clearInterval(this.keepAlive);
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
