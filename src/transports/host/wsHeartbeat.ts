/**
 * Finds half-open WebSocket connections (the host vanished without a close: a laptop put to
 * sleep, a dropped NAT mapping), which TCP alone may not notice for a quarter of an hour. Every
 * `intervalMs` each watched connection is pinged; one that has not answered the previous ping
 * by then — with a pong or any other frame — is terminated, and its session told why. One timer
 * for every connection watched, running only while there are some.
 */
import type { WebSocket } from "ws";

/** Default `limits.pingIntervalMs`: a WebSocket host is pinged this often and must answer before the next ping. */
export const DEFAULT_PING_INTERVAL_MS = 30_000;

interface Watched {
  answered: boolean;
  readonly onDead: (why: string) => void;
}

export class WsHeartbeat {
  private readonly watched = new Map<WebSocket, Watched>();
  private timer: NodeJS.Timeout | undefined;

  /** `intervalMs` 0 turns the heartbeat off. */
  constructor(private readonly intervalMs: number) {}

  /** Watches `socket` until it closes; `onDead` is called once if it stops answering. */
  watch(socket: WebSocket, onDead: (why: string) => void): void {
    if (this.intervalMs <= 0) return;
    const entry: Watched = { answered: true, onDead };
    this.watched.set(socket, entry);
    const alive = (): void => {
      entry.answered = true;
    };
    socket.on("pong", alive);
    socket.on("message", alive);
    socket.once("close", () => {
      this.watched.delete(socket);
      if (this.watched.size === 0) this.stop();
    });
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.beat(), this.intervalMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private beat(): void {
    for (const [socket, entry] of [...this.watched]) {
      if (!entry.answered) {
        this.watched.delete(socket);
        entry.onDead(`no answer to a WebSocket ping within ${this.intervalMs} ms (limits.pingIntervalMs)`);
        socket.terminate();
        continue;
      }
      entry.answered = false;
      try {
        socket.ping();
      } catch {
        // Closing already: its close event removes it.
      }
    }
    if (this.watched.size === 0) this.stop();
  }
}
