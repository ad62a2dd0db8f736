/**
 * The GET stream of a streamable HTTP session (optional in the spec): where a server sends what
 * it has outside a call — logs, list changes, resource updates, its own requests (roots,
 * sampling, elicitation). A server with no stream open drops those.
 *
 * - When: just before `notifications/initialized` goes, which waits for the server's answer to
 *   the GET (up to `serverStreamWaitMs`): a server that asks its client for something the moment
 *   it hears the notification sends that on this stream. A host that never sends the
 *   notification has it opened with its first message after `initialize` (or once `initialize`
 *   is answered, when something was sent behind it).
 * - Kept: a stream that served and then ended or dropped is reconnected, resuming after its own
 *   last event id (never another stream's: the server would replay that stream here). Tries in a
 *   row that do not serve give up, logged, and a POST the server answers later brings another
 *   try. A 405 means the server offers none, for the rest of the session.
 * - Why it is not open is logged when that changes, not each time it is asked again.
 */
import type { Logger } from "../../observe/logger.js";
import { SENT } from "../drainWaiter.js";
import type { BodyStreamLike } from "./nodeFetch.js";
import { settledWithin } from "./settledWithin.js";
import { UnendedEventError } from "./httpBodies.js";
import { newStreamCursor, reconnectDelayMs, type StreamCursor } from "./streamCursor.js";
import { networkErrorText } from "./upstreamMessages.js";

/** Default reconnection attempts of the GET stream after it drops (`serverStreamRetries`). */
export const DEFAULT_SERVER_STREAM_RETRIES = 2;
/** Default wait before reconnecting the GET stream when the server sent no `retry:` (ms). */
export const DEFAULT_SERVER_STREAM_RETRY_MS = 1000;
/**
 * How long after giving up on the GET stream a POST the server answers brings another try: the
 * server is reachable again, but a GET it keeps refusing must not double every POST.
 */
const GET_STREAM_RETRY_AFTER_POST_MS = 30_000;
/**
 * A GET stream open this long (or that carried an event) served: its end starts a new run of
 * reconnection tries. One a server accepts and ends at once, empty, is a failed try, so such a
 * server is not asked again and again without end.
 */
const GET_STREAM_SERVED_MS = 1000;

/** The server's answer to a GET for an event stream: its body when it gave one. */
export interface StreamAnswer {
  status: number;
  contentType: string | undefined;
  /** The event stream; undefined when the server gave none (405, an error status, another type). */
  body: BodyStreamLike | undefined;
}

/**
 * The server's answer to the GET stream: `open`; `none` (405: it offers none, or none was asked
 * for); `refused` (an error status, or not an event stream: asked for once more after
 * `notifications/initialized`); `failed` (no answer: the stream's own reconnection asks again).
 */
export type ServerStreamAnswer = "open" | "none" | "refused" | "failed";

/** What `notifications/initialized` waits for, and the server's answer to the GET it opened. */
export interface FirstStream {
  waited: Promise<void> | undefined;
  answered: Promise<ServerStreamAnswer>;
}

/** What the GET stream needs of its transport. */
export interface ServerStreamLink {
  logger: Logger;
  closed(): boolean;
  /** A GET for an event stream, resuming after `lastEventId` when given. */
  get(lastEventId: string | undefined): Promise<StreamAnswer>;
  /** Reads an event stream to its end, delivering what it carries; `cursor` follows its place. */
  read(body: BodyStreamLike, cursor: StreamCursor): Promise<void>;
  /** Whether an `initialize` sent is still unanswered. */
  initializing(): boolean;
  /** Keeps `work` among what the transport's `close()` waits for. */
  track(work: Promise<void>): void;
  /** What the proxy sends the server, never quoted from its errors. */
  sentSecrets(): Array<string | undefined>;
}

export interface ServerStreamSettings {
  /** Open it at all (`openServerStream`). */
  enabled: boolean;
  /** Tries in a row that do not serve before giving up (`serverStreamRetries`). */
  retries: number;
  /** How long `notifications/initialized` waits for the GET's answer; 0: no wait; undefined: no limit. */
  waitMs: number | undefined;
}

export class ServerStream {
  /** Set while a GET is asked for or its stream is open. */
  private open = false;
  /** Set once the server answered `initialize` with a result: the session has begun. */
  private initializeAnswered = false;
  /**
   * Set once the GET stream was first asked for: by `notifications/initialized`, or by the first
   * message after `initialize` from a host that never sends that notification.
   */
  private asked = false;
  /** The server's answer to the GET last asked for (while `open`). */
  private heard: Promise<ServerStreamAnswer> | undefined;
  /** Set once the server answered a GET with 405: it offers none, and none is asked for again. */
  private none = false;
  /**
   * Set when the host sent something other than `notifications/initialized` behind an
   * `initialize` not yet answered (or both in one batch): the GET goes once that answer is read.
   */
  private onceInitialized = false;
  /** Set when one more GET is to be asked for as soon as the one being asked for ends unserved. */
  private askAgainPending = false;
  /** The GET's refusal or failure last logged (its kind and status or error), until a stream opens again. */
  private troubleLogged: string | undefined;
  /** The GET stream's own place: a POST's stream has its own cursor. */
  private readonly cursor: StreamCursor = newStreamCursor(DEFAULT_SERVER_STREAM_RETRY_MS);
  /** When reconnecting last failed `retries` times in a row (tried again after a POST). */
  private gaveUp: number | undefined;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly link: ServerStreamLink,
    private readonly settings: ServerStreamSettings,
  ) {}

  /**
   * What a message the host sends (after `prior`) does to the GET stream: `notifications/initialized`
   * opens it first and gets what to wait for; a batch with `initialize` in it (2025-03-26 forbids
   * it; a server may still answer) has no GET before the session id, so with the notification in
   * it the GET goes once the answer is read; anything else from a host that never sent the
   * notification opens it.
   */
  sending(initializing: boolean, notifying: boolean, prior: Promise<void> | undefined): FirstStream | undefined {
    if (initializing) {
      if (notifying) this.onceInitialized = true;
      return undefined;
    }
    if (notifying) return this.first(prior);
    this.withoutInitialized(prior);
    return undefined;
  }

  /** A GET refused before the notification (or while it waited) is asked for once more after `sent`. */
  askAgainIfRefused(sent: Promise<void>, answered: Promise<ServerStreamAnswer>): void {
    void Promise.allSettled([sent, answered]).then(([, answer]) => {
      if (answer.status === "fulfilled" && answer.value === "refused") this.askAgain();
    });
  }

  /** The server answered a POST: a GET stream given up on is worth another try (now and then). */
  serverAnswered(): void {
    if (this.gaveUp !== undefined && Date.now() - this.gaveUp >= GET_STREAM_RETRY_AFTER_POST_MS)
      void this.openStream(this.settings.retries);
  }

  /** The server answered `initialize` with a result: what was sent behind it may ask for the GET now. */
  initialized(): void {
    this.initializeAnswered = true;
    if (!this.onceInitialized) return;
    this.onceInitialized = false;
    if (!this.asked) this.withoutInitialized(undefined);
  }

  /**
   * An initialize ended without a result (an error, a failed POST, a cancel): what was sent behind
   * it asked for the GET of a session that did not begin, not of the one a new initialize begins.
   */
  initializeEnded(): void {
    if (!this.link.initializing()) this.onceInitialized = false;
  }

  close(): void {
    clearTimeout(this.retryTimer);
  }

  /**
   * A host that never sends `notifications/initialized` (some clients do not, and servers serve
   * them): its first message after the server's answer to `initialize` asks for the GET stream
   * instead (after `prior`, which may hold the session id), without waiting for it — else what the
   * server sends outside a call (logs, list changes, its own requests) would have nowhere to go.
   */
  private withoutInitialized(prior: Promise<void> | undefined): void {
    if (this.asked || !this.settings.enabled) return;
    if (!this.initializeAnswered) {
      // Sent behind an initialize not yet answered: the GET goes once that answer is read.
      if (this.link.initializing()) this.onceInitialized = true;
      return;
    }
    this.asked = true;
    this.link.logger.info(
      "host sent a message after initialize before any notifications/initialized; " +
        "the session's GET stream is opened now",
    );
    // Refused (a server may want the notification first), it is asked again as a reconnection is
    // (`retries` times, then after a POST the server answers); the notification, if it comes,
    // waits for this GET's answer and asks once more after a refusal.
    void (prior ?? SENT).then(() => this.openStream(0, true));
  }

  /**
   * What `notifications/initialized` waits for (`waited`): `prior`, then the GET stream it opens
   * first — the server's answer to it (`answered`), or `waitMs` without one (logged; 0: no wait) —
   * so what the server sends the session the moment it hears the notification has a stream to go on.
   */
  private first(prior: Promise<void> | undefined): FirstStream {
    if (!this.settings.enabled) return { waited: prior, answered: Promise.resolve("none") };
    this.asked = true;
    // The GET carries the session id, which the answer to `initialize` (what `prior` waits for) brings.
    const answered = prior === undefined ? this.openStream(0) : prior.then(() => this.openStream(0));
    const limit = this.settings.waitMs;
    if (limit === 0) return { waited: prior, answered };
    const wait = (): Promise<void> =>
      settledWithin(answered, limit, () => {
        if (this.link.closed()) return;
        this.link.logger.warn("upstream has not answered the GET stream; notifications/initialized goes on", {
          waitedMs: limit,
          limit: "limits.upstreamStreamWaitMs",
        });
      });
    return { waited: prior === undefined ? wait() : prior.then(wait), answered };
  }

  /**
   * Why the GET stream is not open, logged when it changes (another status, another error) or a
   * stream opened since: a server that refuses every GET is asked again after POSTs for the whole
   * session, and the same refusal again is no news.
   */
  private trouble(message: string, fields: Record<string, unknown>): void {
    const trouble = `${message} ${JSON.stringify(fields)}`;
    if (this.troubleLogged === trouble) return;
    this.troubleLogged = trouble;
    this.link.logger.warn(message, fields);
  }

  /** One more GET: as soon as the one being asked for ends (refused), or now if none is. */
  private askAgain(): void {
    if (this.open) this.askAgainPending = true;
    else void this.openStream(0);
  }

  /**
   * Opens the GET stream; settles with the server's answer to the GET (to the one already asked
   * for, while it is), at once (`none`) if none is opened.
   *
   * `attempt`: reconnections in a row that have not served (opened, and carried an event or stayed
   * open `GET_STREAM_SERVED_MS`). A stream that served and then ended or dropped is reconnected
   * (resuming after its own last event id) however often that happens, as EventSource does; only
   * `retries` tries in a row that do not serve give up — logged, and tried again after a POST the
   * server answers, so messages sent outside a call are not lost for the rest of the session. A
   * first GET refused (`attempt` 0, unless `reconnectIfRefused`) is not reconnected:
   * `notifications/initialized` asks once more, then a POST the server answers. A 405 is final.
   * One chain: a reconnection waiting for its delay gives way to a GET asked for meanwhile.
   */
  private openStream(attempt: number, reconnectIfRefused = attempt > 0): Promise<ServerStreamAnswer> {
    if (this.link.closed() || this.none || !this.settings.enabled) return Promise.resolve("none");
    // Already asked for: the answer to that GET.
    if (this.open) return this.heard ?? Promise.resolve("none");
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.open = true;
    const retrying = this.gaveUp !== undefined;
    this.gaveUp = undefined;
    let answered: (answer: ServerStreamAnswer) => void = () => {};
    const heard = new Promise<ServerStreamAnswer>((resolve) => (answered = resolve));
    this.heard = heard;
    // It served: it carried an event, or stayed open a while (a quiet stream cut by a load balancer).
    let served = false;
    const run = async (): Promise<boolean> => {
      let answer: StreamAnswer;
      try {
        answer = await this.link.get(this.cursor.lastEventId);
      } catch (error) {
        answered("failed");
        throw error;
      }
      const { status, contentType, body } = answer;
      if (body === undefined) {
        if (status === 405) this.none = true;
        else if (!this.link.closed()) this.trouble("GET stream refused", { status, contentType });
        answered(status === 405 ? "none" : "refused");
        // Refused at first: asked once more after notifications/initialized. Refused when
        // reconnecting (a 5xx while the server restarts): one more failed try.
        return reconnectIfRefused && status !== 405;
      }
      this.troubleLogged = undefined;
      answered("open");
      const openedAt = Date.now();
      const { events, lastEventId } = this.cursor;
      let cut = false;
      try {
        await this.link.read(body, this.cursor);
      } catch (error) {
        cut = error instanceof UnendedEventError;
        throw error;
      } finally {
        // A message (with an event id or without), or a new event id (a server that primes each
        // stream with one and closes it, to be polled), or a while open. Not one the proxy cut
        // for an event without end, whatever came before it: a server doing so each time would
        // be asked again without end, each time read for the length of the cut.
        served =
          !cut &&
          (this.cursor.events !== events ||
            this.cursor.lastEventId !== lastEventId ||
            Date.now() - openedAt >= GET_STREAM_SERVED_MS);
      }
      return true; // it was open and ended: reconnect, resuming after its own last event id
    };
    const done = run()
      .catch((error: unknown) => {
        if (!this.link.closed())
          this.trouble("GET stream failed", { error: networkErrorText(error, this.link.sentSecrets()) });
        return true;
      })
      .then((reconnect) => {
        this.open = false;
        if (this.link.closed()) return;
        const askAgain = this.askAgainPending && !served;
        this.askAgainPending = false;
        if (askAgain) {
          void this.openStream(0);
          return;
        }
        if (!reconnect) {
          // A first GET refused: tried again after a POST the server answers (a 405: never).
          if (!this.none) this.gaveUp = Date.now();
          return;
        }
        this.reconnectLater(served ? 0 : attempt, retrying);
      });
    this.link.track(done);
    return heard;
  }

  /** After `failedTries` tries in a row that did not serve: the next one, or a give-up (logged once per loss). */
  private reconnectLater(failedTries: number, retrying: boolean): void {
    if (failedTries >= this.settings.retries) {
      this.gaveUp = Date.now();
      // Once per loss: a try after a POST that fails again is no news.
      if (!retrying)
        this.link.logger.warn(
          "GET stream not reopened; what the server sends outside a call is lost until it is " +
            "(tried again after a POST the server answers)",
          { tries: failedTries + 1 },
        );
      return;
    }
    this.retryTimer = setTimeout(() => void this.openStream(failedTries + 1), reconnectDelayMs(this.cursor));
    this.retryTimer.unref();
  }
}
