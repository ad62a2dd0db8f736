/**
 * `stdio`: the upstream ended before the host was heard — a server that exits as it starts (a
 * missing API key, a wrong path). The host's first requests are still unread in the proxy's
 * stdin; each request there is answered with why the upstream ended, so the host shows the
 * reason instead of a server that vanished without a word. Reading stops when the host's input
 * ends or `waitMs` (`limits.closeTimeoutMs`) pass, whichever is first; notifications are dropped.
 */
import type { Readable, Writable } from "node:stream";
import { JSONRPC } from "../errors/jsonRpcCodes.js";
import { StdioHostTransport } from "../transports/host/stdioHost.js";
import { idAsWritten } from "../transports/idAsWritten.js";
import { errorResponse, isRequest } from "../transports/jsonrpc.js";

export interface UnheardHost {
  readonly input: Readable;
  readonly output: Writable;
  readonly maxMessageBytes: number;
  /** What the session's transport read of a message it did not finish (the start of `initialize`). */
  readonly unread: Buffer;
  /** Settles when the proxy is told to stop (a signal): the wait ends then. */
  readonly stop: Promise<unknown>;
}

export async function answerUnheardHost(io: UnheardHost, message: string, waitMs: number): Promise<void> {
  const { input, output, maxMessageBytes, unread } = io;
  const host = new StdioHostTransport({ input, output, maxMessageBytes, unread });
  const answer = (msg: unknown) =>
    isRequest(msg) ? errorResponse(idAsWritten(msg), JSONRPC.UPSTREAM_UNAVAILABLE, message) : undefined;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, waitMs);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    host.oninputend = done;
    host.onclose = done;
    void io.stop.then(done);
    host.onmessage = (msg) => {
      const answers = (Array.isArray(msg) ? msg.map(answer) : [answer(msg)]).filter((a) => a !== undefined);
      if (answers.length === 0) return;
      void host.send((Array.isArray(msg) ? answers : answers[0]) as never).catch(done);
    };
    void host.start().then(() => {
      // The session's own transport paused stdin when it closed: reading starts again here.
      io.input.resume();
    });
  });
  await host.close();
}
