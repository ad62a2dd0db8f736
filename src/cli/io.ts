/**
 * The process's IO, passed in so commands can be run in tests without a
 * child process; `processIo()` gives the real one.
 */
import type { Readable, Writable } from "node:stream";
import { NormalizerError } from "../errors/NormalizerError.js";
import { osReason } from "../errors/osReason.js";

export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/**
 * Everything `stream` gives, or null once it gave more than `maxBytes` (what is read then is
 * let go and the stream destroyed: an endless input, `/dev/zero`, must not fill the memory).
 */
export async function readAll(stream: Readable, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    total += bytes.length;
    if (total > maxBytes) {
      stream.destroy();
      return null;
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

/**
 * Writes and waits for the stream to take it (a 50 MiB write must not be cut by exit). A reader
 * that went away (`report … | head -1`: EPIPE) is not an error of the command: what is left is
 * not wanted, and the command goes on quietly instead of dying with a stack trace. Any other
 * failure (a full disk) rejects with an error that says so in one line.
 */
export function writeFully(stream: Writable, text: string): Promise<void> {
  heardOnce(stream);
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => {
      if (!error || readerGone(error)) resolve();
      else
        reject(
          new NormalizerError(
            "OUTPUT_WRITE_FAILED",
            `cannot write its output: ${osReason(error)}`,
            {},
            { cause: error },
          ),
        );
    });
  });
}

const heard = new WeakSet<Writable>();

/**
 * The stream's own `error` event is listened to (unheard, it would crash the process with a
 * stack trace); what failed is told by the write's callback, above.
 */
function heardOnce(stream: Writable): void {
  if (heard.has(stream)) return;
  heard.add(stream);
  stream.on("error", () => {});
}

function readerGone(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED";
}

/**
 * Resolves once `out` has handed everything written to it to the OS — the last answers of a
 * session must not be cut by the exit that follows — or after `waitMs`, for a host that stopped
 * reading (`limits.closeTimeoutMs`), or when the stream fails or closes.
 */
export async function outputTaken(out: Writable, waitMs: number): Promise<void> {
  if (out.writableLength === 0 || out.destroyed) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      clearInterval(poll);
      out.off("error", done).off("close", done);
      resolve();
    };
    const timer = setTimeout(done, waitMs);
    // No 'drain' comes for writes the stream took without asking to wait: its queue is watched.
    const poll = setInterval(() => {
      if (out.writableLength === 0 || out.destroyed) done();
    }, 5);
    out.on("error", done).on("close", done);
  });
}
