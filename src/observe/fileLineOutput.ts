/**
 * Log text appended to a file, asynchronously (sonic-boom: writes leave the event loop, and
 * text given while a write is under way goes out with the next one). The file is opened for
 * append: a restart never truncates what earlier runs wrote. `reopen` opens the path again
 * (after logrotate moved the file away; its folders made again if they went too) — also after a
 * write failed (a disk that was full, a folder taken away): then with a writer of its own, its
 * folders made again, the failure reported again if the path still takes nothing; `close` writes
 * what is left, waiting a bounded time.
 *
 * sonic-boom is loaded when the first file is opened, not at start-up: a proxy that logs to
 * stderr only never loads it.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { makeFolders } from "./logFile.js";
import type { SonicBoom } from "sonic-boom";

export interface FileLineOutput {
  put(text: string): void;
  reopen(): void;
  close(waitMs: number): Promise<void>;
}

const load = createRequire(import.meta.url);

export interface FileLineEvents {
  /** A write or an open failed: nothing more goes to the file until a reopen. */
  onError(error: Error): void;
  /**
   * Opening the path again, before a new writer is made after a failure (its folders made, a
   * line torn by the failure ended): throws when it cannot be.
   */
  prepare(): void;
  /** The file took a write again after a failure. */
  onResumed(): void;
}

export function fileLineOutput(file: string, events: FileLineEvents): FileLineOutput {
  const Writer = load("sonic-boom") as typeof SonicBoom;
  // After a failed write (disk full, permissions, a reopen that failed) the file takes nothing
  // more — no retries, no flushes: one report — until a reopen is asked for.
  let failed = false;
  const open = (): SonicBoom => {
    const writer = new Writer({ dest: file, append: true, sync: false, minLength: 0 });
    writer.on("error", (error: Error) => {
      if (failed || writer !== out) return;
      failed = true;
      events.onError(error);
    });
    return writer;
  };
  let out = open();
  let closing: Promise<void> | undefined;
  // A reopen asked for while a write is under way happens after it; sonic-boom drops it if
  // end() comes first (and then never closes): close() waits for the file to be open again.
  let reopened: Promise<void> | undefined;
  const untilOpen = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const settle = (): void => {
        out.off("ready", settle);
        out.off("error", settle);
        reopened = undefined;
        resolve();
      };
      out.once("ready", settle);
      out.once("error", settle);
    });
  return {
    put(text) {
      if (!failed && closing === undefined) out.write(text);
    },
    reopen() {
      if (closing !== undefined) return;
      if (failed) {
        try {
          events.prepare();
        } catch (error) {
          events.onError(error as Error);
          return;
        }
        out.destroy();
        failed = false;
        out = open();
        // Told once the file has taken a write, not when it is merely open (a disk still full).
        out.once("write", () => events.onResumed());
        return;
      }
      // Its folders taken away (a cleanup, a rotation that moved the folder): made again first.
      try {
        makeFolders(dirname(file));
      } catch (error) {
        failed = true;
        events.onError(error as Error);
        return;
      }
      reopened ??= untilOpen();
      out.reopen();
    },
    close(waitMs) {
      closing ??= new Promise<void>((resolve) => {
        if (failed) {
          out.destroy();
          resolve();
          return;
        }
        const timer = setTimeout(() => {
          out.destroy();
          resolve();
        }, waitMs);
        timer.unref();
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        out.once("close", done);
        out.once("error", done);
        const end = (): void => {
          try {
            out.end();
          } catch {
            // Already broken: nothing left to write.
            done();
          }
        };
        if (reopened === undefined) end();
        else void reopened.then(end);
      });
      return closing;
    },
  };
}
