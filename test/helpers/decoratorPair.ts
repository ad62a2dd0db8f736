/**
 * The normalizing decorator in process, for tests of what it does to a message stream: the
 * proxy's side of the SDK's in-memory pair wrapped by `withNormalization`, the other side
 * playing the upstream. What reaches the host's side and what reaches the upstream are kept,
 * in order.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { withNormalization, type NormalizationEvent, type NormalizationOptions } from "../../src/index.js";

/**
 * Starts the pair. `wrap` puts something between the in-memory transport and the decorator
 * (a reader that can stop, say); it is handed back as `inner`.
 */
export async function decoratorPair<T extends Transport = InMemoryTransport>(
  options: NormalizationOptions,
  wrap: (proxySide: InMemoryTransport) => T = (proxySide) => proxySide as unknown as T,
) {
  const [upstream, proxySide] = InMemoryTransport.createLinkedPair();
  const inner = wrap(proxySide);
  const transport = withNormalization(inner, options);
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => received.push(message);
  const toUpstream: JSONRPCMessage[] = [];
  upstream.onmessage = (message) => toUpstream.push(message);
  await transport.start();
  await upstream.start();
  return { upstream, transport, inner, received, toUpstream };
}

/** The pair with the fit layer `fit`, and the normalization events its decorator reports. */
export async function fitPair(fit: NormalizationOptions["fit"]) {
  const events: NormalizationEvent[] = [];
  return { ...(await decoratorPair({ fit, onNormalized: (e) => events.push(e) })), events };
}
