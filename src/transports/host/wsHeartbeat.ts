/**
 * Finds half-open WebSocket connections (the host vanished without a close: a laptop put to
 * sleep, a dropped NAT mapping), which TCP alone may not notice for a quarter of an hour. Every
 * `intervalMs` each watched connection is pinged; one that has not answered the previous ping
 * by then is terminated, and its session told why. One timer for every connection watched,
 * running only while there are some.
 *
 * Flow control shapes what counts as an answer:
 * - a pong, any frame, or the host taking everything queued for it (its socket's `drain`): a
 *   host slowly reading a flood sees the ping only behind what was queued before it, but the
 *   drains show it is there;
 * - while the proxy itself has stopped reading the connection because the session's upstream
 *   is behind, the host's pong cannot be seen: the connection is not judged, and gets a fresh
 *   ping once reading resumes. When it stopped because the host has not taken what it was sent
 *   (answers to a flood of requests), the host is judged as usual: taking them drains.
 * A host that reads nothing at all for a whole interval is dropped like a vanished one: the
 * interval must be longer than the longest pause a host may take.
 */
import type { WebSocket } from "ws";

/** What the heartbeat asks of the session on a watched connection. */
export interface HeartbeatPeer {
  /** Called once if the host stops answering. */
  readonly onDead: (why: string) => void;
  /** True while the proxy has stopped reading the connection because the upstream is behind. */
  readonly isReadingPaused?: () => boolean;
  /** The TCP socket under the WebSocket: its `drain` means the host took what was queued. */
  readonly rawSocket?: { on(event: "drain", listener: () => void): unknown } | undefined;
}

interface Watched {
  answered: boolean;
  readonly peer: HeartbeatPeer;
}

export class WsHeartbeat {
  private readonly watched = new Map<WebSocket, Watched>();
  private timer: NodeJS.Timeout | undefined;

  /** `intervalMs` 0 turns the heartbeat off. */
  constructor(private readonly intervalMs: number) {}

  /** Watches `socket` until it closes. */
  watch(socket: WebSocket, peer: HeartbeatPeer): void {
    if (this.intervalMs <= 0) return;
    const entry: Watched = { answered: true, peer };
    this.watched.set(socket, entry);
    const alive = (): void => {
      entry.answered = true;
    };
    socket.on("pong", alive);
    socket.on("message", alive);
    peer.rawSocket?.on("drain", alive);
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
      if (entry.peer.isReadingPaused?.() === true) {
        // Its answer, if any, waits unread: judged only after reading resumes.
        entry.answered = true;
        continue;
      }
      if (!entry.answered) {
        this.watched.delete(socket);
        entry.peer.onDead(`no answer to a WebSocket ping within ${this.intervalMs} ms (limits.pingIntervalMs)`);
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
