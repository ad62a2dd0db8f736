/**
 * Images are decoded and encoded a few at a time over the whole process
 * (`limits.fitConcurrency`): each fit holds a decoded image in memory. A job that has not
 * finished `limits.fitTimeoutMs` after it was queued resolves as a timeout warning, so no message
 * waits longer than that (sharp's work goes on in its thread and its result is dropped). Waiting
 * jobs take turns by session: one whose result carries thousands of images does not hold every
 * other session's behind them.
 *
 * The decoders and encoders are loaded with the first image to fit: a proxy whose results carry
 * none (or whose config does not fit images) never loads them.
 */
import type { ImageFit } from "./images/fitImage.js";
import type { ImageSettings } from "./settings.js";

export interface ImageQueueOptions {
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly maxPixels: number;
}

let loading: Promise<typeof import("./images/fitImage.js")> | undefined;

function loadFitImage(): Promise<typeof import("./images/fitImage.js")> {
  loading ??= import("./images/fitImage.js");
  return loading;
}

/** Jobs of no session (the `normalize` command, the library without one). */
const NO_SESSION = {};

/** A first-in, first-out list that takes from its head without moving the rest. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

export class ImageQueue {
  private running = 0;
  private queued = 0;
  /** Waiting jobs by session, the sessions in the order of their turns. */
  private readonly waiting = new Map<object, Fifo<() => void>>();
  /**
   * What each session's end gives up, behind one listener per session: a listener per image made
   * adding each one cost as many as were there.
   */
  private readonly onEnd = new WeakMap<AbortSignal, Set<() => void>>();

  constructor(readonly options: ImageQueueOptions) {}

  /** Jobs running and waiting (for tests and metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.queued };
  }

  /**
   * `settingsAs`: the settings for what the bytes turn out to be (null: images off for that type).
   * `ended`: the session's end, which gives the fit up as its timeout does (and whose images
   * take turns with other sessions'). `cancelled`: the host's cancel of the request the image
   * answers, which gives it up too.
   */
  fit(
    bytes: Buffer,
    settings: ImageSettings,
    settingsAs?: (mime: string) => ImageSettings | null,
    ended?: AbortSignal,
    cancelled?: AbortSignal,
  ): Promise<ImageFit> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let giveUp: (() => void) | undefined;
    let cancel: (() => void) | undefined;
    const timeout = new Promise<ImageFit>((resolve) => {
      const stop = (reason: string): void => {
        abort.abort();
        resolve({ kind: "warn", action: "warn-image-timeout", reason });
      };
      timer = setTimeout(
        () => stop(`not fitted within limits.fitTimeoutMs (${this.options.timeoutMs} ms); sent as it was`),
        this.options.timeoutMs,
      );
      giveUp = () => stop("not fitted: its session ended");
      if (ended?.aborted) giveUp();
      else if (ended !== undefined) this.whenEnded(ended).add(giveUp);
      cancel = () => stop("not fitted: the host cancelled its request; sent as it was");
      if (cancelled?.aborted) cancel();
      else if (cancelled !== undefined) this.whenEnded(cancelled).add(cancel);
    });
    const work = this.slot(ended ?? NO_SESSION).then(async (release) => {
      try {
        if (abort.signal.aborted) return null;
        let fitImage: typeof import("./images/fitImage.js")["fitImage"];
        try {
          ({ fitImage } = await loadFitImage());
        } catch (error) {
          // A broken install: the image goes as it was, with a warning, as when sharp is missing.
          const why = (error instanceof Error ? error.message : String(error)).split("\n")[0];
          const reason = `the image modules could not be loaded (${why}); sent as it was`;
          return { kind: "warn", action: "warn-image-unfittable", reason } satisfies ImageFit;
        }
        if (abort.signal.aborted) return null;
        return await fitImage(bytes, settings, {
          maxPixels: this.options.maxPixels,
          signal: abort.signal,
          ...(settingsAs === undefined ? {} : { settingsAs }),
        });
      } finally {
        release();
      }
    });
    return Promise.race([work.then((fit) => fit ?? timeout), timeout]).finally(() => {
      clearTimeout(timer);
      if (giveUp !== undefined && ended !== undefined) this.onEnd.get(ended)?.delete(giveUp);
      if (cancel !== undefined && cancelled !== undefined) this.onEnd.get(cancelled)?.delete(cancel);
    });
  }

  /** The give-ups a session's end (or a request's cancel) calls, listening to it once. */
  private whenEnded(ended: AbortSignal): Set<() => void> {
    let giveUps = this.onEnd.get(ended);
    if (giveUps === undefined) {
      const all = new Set<() => void>();
      giveUps = all;
      this.onEnd.set(ended, all);
      ended.addEventListener(
        "abort",
        () => {
          for (const giveUp of [...all]) giveUp();
        },
        { once: true },
      );
    }
    return giveUps;
  }

  private slot(session: object): Promise<() => void> {
    const release = (): void => {
      this.running--;
      this.next();
    };
    if (this.running < this.options.concurrency) {
      this.running++;
      return Promise.resolve(release);
    }
    return new Promise((resolve) => {
      let jobs = this.waiting.get(session);
      if (jobs === undefined) {
        jobs = new Fifo();
        this.waiting.set(session, jobs);
      }
      this.queued++;
      jobs.push(() => {
        this.running++;
        resolve(release);
      });
    });
  }

  /** Starts the next waiting job: the first session in turn gives one and goes to the back. */
  private next(): void {
    for (const [session, jobs] of this.waiting) {
      const start = jobs.shift();
      this.waiting.delete(session);
      if (jobs.size > 0) this.waiting.set(session, jobs);
      if (start === undefined) continue;
      this.queued--;
      start();
      return;
    }
  }
}
