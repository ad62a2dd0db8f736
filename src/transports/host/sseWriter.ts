/**
 * One Server-Sent Events stream on an HTTP response (WHATWG HTML §9.2, as used by MCP's
 * streamable HTTP and legacy HTTP+SSE transports).
 *
 * A big message is written as three writes (`event:`/`data:` prefix, the serialized JSON — its
 * pieces, when it carries raw strings — the blank line), so a 50 MiB message is never
 * concatenated into a second 50 MiB string; a small one as one string. The events of one tick
 * leave in one system call (TickCork). `JSON.stringify` never emits CR or LF, so one `data:`
 * line always suffices.
 * When the host is behind, `write` returns the stream's one drain waiter (shared by every write
 * until the socket drains) and `queuedBytes` says how much is held: the proxy stops reading the
 * upstream on that, not on a listener per event.
 */
import type { ServerResponse } from "node:http";
import { DrainWaiter, SENT } from "../drainWaiter.js";
import { TickCork } from "../tickCork.js";
import { writeWire, type WireJson } from "../wireJson.js";

/** Events whose data is up to this many characters are written as one string. */
const SINGLE_WRITE_MAX_CHARS = 64 * 1024;

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
  private readonly drain: DrainWaiter;
  /** The events of one tick leave in one system call (see TickCork). */
  private readonly tick: TickCork;

  /** Sends status 200 and the SSE headers at once, so the client sees the stream open. */
  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string>,
    /** Interval of `: keepalive` comments that keep idle proxies from cutting the stream; 0: none. */
    keepAliveMs: number,
  ) {
    this.drain = new DrainWaiter(res);
    this.tick = new TickCork(res);
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    res.flushHeaders();
    res.on("close", () => this.markEnded());
    if (keepAliveMs > 0) {
      this.keepAlive = setInterval(() => {
        // A stream the host is behind on needs no keepalive: it is not idle.
        if (!this.ended && !res.writableNeedDrain) res.write(": keepalive\n\n");
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

  /** Bytes written to the stream that the host has not taken yet. */
  get queuedBytes(): number {
    return this.ended ? 0 : this.res.writableLength;
  }

  /** Settles when the host has taken what the stream holds (or the stream ended). */
  drained(): Promise<void> {
    return this.drain.wait();
  }

  /**
   * Writes one event (with `id`, its event id, when given); settles at once, or when the socket
   * can take more (or the stream is gone).
   */
  write(event: string, data: WireJson, id?: string): Promise<void> {
    if (this.ended) return SENT;
    const res = this.res;
    const head = id === undefined ? `event: ${event}\ndata: ` : `id: ${id}\nevent: ${event}\ndata: `;
    let ready: boolean;
    if (typeof data === "string" && data.length <= SINGLE_WRITE_MAX_CHARS) {
      // Small messages (nearly all): one chunk, not three (each chunk of a chunked response
      // costs its own size line and buffer entry).
      this.tick.beforeWrite();
      ready = res.write(`${head}${data}\n\n`);
    } else {
      this.tick.corkNow();
      res.write(head);
      writeWire(res, data);
      ready = res.write("\n\n");
    }
    return ready ? SENT : this.drain.wait();
  }

  /**
   * A priming event: an id and no data, so the host has a `Last-Event-ID` to resume from before
   * the first message comes (MCP 2025-11-25; older hosts may choke on an event with empty data).
   */
  prime(id: string): void {
    if (this.ended) return;
    this.tick.beforeWrite();
    this.res.write(`id: ${id}\ndata: \n\n`);
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
