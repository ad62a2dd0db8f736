/** A transport for in-process proxy tests: it records what it is sent, and plays its peer's side. */
import type {
  FramingProblem,
  JSONRPCMessage,
  MessageExtraInfo,
  ProxySendOptions,
  ProxyTransport,
} from "../../src/transports/types.js";

export class Recorder implements ProxyTransport {
  onclose?: (() => void) | undefined;
  onproblem?: ((problem: FramingProblem) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  readonly sent: Array<{ message: Record<string, unknown>; options: ProxySendOptions | undefined }> = [];

  async start(): Promise<void> {}
  async close(): Promise<void> {}
  async send(message: JSONRPCMessage, options?: ProxySendOptions): Promise<void> {
    this.sent.push({ message: message as Record<string, unknown>, options });
  }
  /** A message arrives from the peer. */
  receive(message: unknown, extra?: MessageExtraInfo): void {
    this.onmessage?.(message as JSONRPCMessage, extra);
  }
  /** The peer ends the connection. */
  end(): void {
    this.onclose?.();
  }
}
