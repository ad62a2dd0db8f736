/**
 * Images are decoded and encoded a few at a time over the whole process
 * (`limits.fitConcurrency`): each fit holds a decoded image in memory. A job that has not
 * finished `limits.fitTimeoutMs` after it was queued resolves as a timeout warning, so no message
 * waits longer than that (sharp's work goes on in its thread and its result is dropped).
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

export class ImageQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly options: ImageQueueOptions) {}

  /** Jobs running and waiting (for tests and metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /**
   * `settingsAs`: the settings for what the bytes turn out to be (null: images off for that type).
   * `ended`: the session's end, which gives the fit up as its timeout does.
   */
  fit(
    bytes: Buffer,
    settings: ImageSettings,
    settingsAs?: (mime: string) => ImageSettings | null,
    ended?: AbortSignal,
  ): Promise<ImageFit> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let giveUp: (() => void) | undefined;
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
      else ended?.addEventListener("abort", giveUp, { once: true });
    });
    const work = this.slot().then(async (release) => {
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
      if (giveUp !== undefined) ended?.removeEventListener("abort", giveUp);
    });
  }

  private slot(): Promise<() => void> {
    const release = (): void => {
      this.running--;
      this.waiting.shift()?.();
    };
    if (this.running < this.options.concurrency) {
      this.running++;
      return Promise.resolve(release);
    }
    return new Promise((resolve) =>
      this.waiting.push(() => {
        this.running++;
        resolve(release);
      }),
    );
  }
}
