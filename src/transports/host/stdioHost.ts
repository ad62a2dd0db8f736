/**
 * MCP over the proxy's own stdin/stdout (MCP spec, basic/transports §"stdio"): one JSON-RPC
 * message per line, UTF-8, no embedded newlines. This is what desktop hosts run.
 *
 * Unlike the SDK's `StdioServerTransport`, framing is linear (`JsonLineReader`: a 50 MiB
 * message is scanned once and joined once), lines over `maxMessageBytes` and lines
 * that are not JSON are reported through `onproblem` and reading goes on, and a host that does
 * not read its stdin shows as `queuedBytes` / `whenDrained`, so the proxy stops reading the
 * upstream instead of growing its memory. `pauseReading` pauses our stdin in turn.
 *
 * Stdout carries JSON-RPC only: this is the one writer of `output`.
 * IO is injected; the defaults are the process's streams.
 */
import type { Readable, Writable } from "node:stream";
import { JsonLineReader, type Framed } from "../lineFraming.js";
import { DrainWaiter, SENT } from "../drainWaiter.js";
import { ReadYield } from "../readYield.js";
import { TickCork } from "../tickCork.js";
import { encodeWire, writeWire, type WireJson } from "../wireJson.js";
import type { JSONRPCMessage, TransportSendOptions } from "../types.js";
import { HostTransportBase } from "./hostTransportBase.js";

export interface StdioHostOptions {
  /** Where the host's messages come from. Default `process.stdin`. */
  input?: Readable;
  /** Where messages to the host go. Default `process.stdout`. */
  output?: Writable;
  /** Largest message accepted from the host, in bytes (`limits.maxMessageBytes`). */
  maxMessageBytes: number;
  /** What an earlier transport on the same input read of a message it did not finish: read first. */
  unread?: Buffer;
}

/** Messages up to this many characters are written with their LF as one string. */
const SINGLE_WRITE_MAX_CHARS = 64 * 1024;

export class StdioHostTransport extends HostTransportBase {
  /**
   * Set it to keep the session when the host's input ends (EOF on a pipe: `printf … | stdio`):
   * the output stays open for the answers still due, and the owner closes the transport once
   * they are out. Unset, EOF ends the session at once.
   */
  oninputend?: (() => void) | undefined;
  private inputEnded = false;

  private readonly input: Readable;
  private readonly output: Writable;
  private readonly reader: JsonLineReader;
  private readonly unread: Buffer | undefined;
  private readonly drain: DrainWaiter;
  /** The writes of one tick leave in one system call (see TickCork). */
  private readonly tick: TickCork;
  /** Reads stdin in turns with the rest of the process, and holds it while the upstream is behind. */
  private readonly turns: ReadYield;

  private readonly onData = (chunk: Buffer | string): void => {
    this.take(this.reader.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk));
    this.turns.took(chunk.length);
  };
  private readonly onEnd = (): void => {
    if (this.inputEnded) return; // 'end' and then 'close'
    this.inputEnded = true;
    this.take(this.reader.end());
    if (this.oninputend === undefined) this.finish();
    else this.oninputend();
  };
  private readonly onInputError = (error: Error): void => {
    this.reportError(error);
    this.finish();
  };
  private readonly onOutputError = (error: Error): void => {
    // EPIPE and friends: the host is gone, and with it the session.
    this.reportError(error);
    this.finish();
  };

  constructor(options: StdioHostOptions) {
    super();
    this.input = options.input ?? process.stdin;
    this.output = options.output ?? process.stdout;
    this.drain = new DrainWaiter(this.output);
    this.tick = new TickCork(this.output);
    this.turns = new ReadYield(
      () => this.input.pause(),
      () => {
        if (!this.isClosed) this.input.resume();
      },
    );
    this.reader = new JsonLineReader({ maxMessageBytes: options.maxMessageBytes });
    this.unread = options.unread;
  }

  override async start(): Promise<void> {
    await super.start();
    // Closed before it started: stdin stays unread, for whoever answers the host instead.
    if (this.isClosed) return;
    if (this.unread !== undefined && this.unread.length > 0) this.onData(this.unread);
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    this.input.on("close", this.onEnd);
    this.input.on("error", this.onInputError);
    this.output.on("error", this.onOutputError);
    // An input that ended before this transport started reports no end to it.
    if (this.input.readableEnded) queueMicrotask(this.onEnd);
  }

  /** What was read of a message not finished yet: for a transport that takes this input over. */
  get unfinishedInput(): Buffer {
    return this.reader.unfinished;
  }

  /**
   * Writes the message and its LF, without concatenating a copy of a big one.
   * Not an async function: a message the pipe takes at once (nearly all) costs no promise; one
   * the host is behind on gets the stream's one drain waiter.
   */
  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    const out = this.output;
    if (this.isClosed || out.destroyed || out.writableEnded) return SENT;
    // Serialized before corking: serializing throws on what JSON cannot write (a BigInt put in by
    // code, a string past the longest one), and a throw between cork() and uncork() would hold
    // every later write back.
    let text: WireJson;
    try {
      text = encodeWire(message);
    } catch (error) {
      return Promise.reject(error);
    }
    let ready: boolean;
    if (typeof text === "string" && text.length <= SINGLE_WRITE_MAX_CHARS) {
      // Small messages (nearly all of them): one string, one write.
      this.tick.beforeWrite();
      ready = out.write(`${text}\n`);
    } else {
      this.tick.corkNow();
      writeWire(out, text);
      ready = out.write("\n");
    }
    return ready ? SENT : this.drain.wait();
  }

  /** Bytes written to the host's pipe (our stdout) that it has not read yet. */
  override get queuedBytes(): number {
    return this.output.writableLength;
  }

  override whenDrained(): Promise<void> {
    return this.drain.wait();
  }

  protected override stopReading(): void {
    this.turns.hold();
  }

  protected override startReading(): void {
    this.turns.release();
  }

  protected release(): void {
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.input.off("close", this.onEnd);
    this.input.off("error", this.onInputError);
    // The output error listener stays: a write still buffered may fail (EPIPE) after close,
    // and an 'error' with no listener would crash the process.
    // Stop reading, so a process whose only handle left is stdin can exit.
    this.input.pause();
  }

  private take(framed: Framed[]): void {
    for (const item of framed) {
      if (item.problem === undefined) this.deliver(item.message as JSONRPCMessage);
      else if (this.onproblem !== undefined) this.onproblem(item.problem);
      else
        this.reportError(
          new Error(
            `Unreadable message from the host (${item.problem.kind}, ${item.problem.bytes} bytes): ` +
              `${item.problem.excerpt}`,
          ),
        );
    }
  }
}
