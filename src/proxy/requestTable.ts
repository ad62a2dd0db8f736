/**
 * The requests in flight on one upstream connection: request id → the request, with its method
 * and what each user of the table needs to know about it — the normalizing decorator (which
 * result shape an answer has, the tool a call named) and the bridge or stateless pool that owns
 * the connection (deadlines, progress tokens, who asked).
 *
 * One table per connection, shared: the owner (bridge, pool) adds each request it forwards and
 * takes it out when it is answered, times out, is cancelled or the connection ends; the decorator
 * only reads entries and notes its own fields on them. A decorator used on its own (in-process,
 * no bridge) owns a table of its own.
 *
 * Keyed by the id itself (`key`), not a string made from it: a Map tells 1 from "1" (JSON-RPC ids
 * of different types are different ids) and takes 0 and -0 as one id, as JSON does; an integer
 * past 2^53 by its exact value (`idKeyOf`). Entries are kept in the order they were added.
 */
import type { RequestKey } from "../transports/idAsWritten.js";
import type { RequestId } from "../transports/jsonrpc.js";

/** What every user of the table knows about a request in flight. */
export interface InFlightRequest {
  readonly id: RequestId;
  /** What the table knows it by: `idKeyOf` its request. */
  readonly key: RequestKey;
  readonly method: string;
  /** For a `tasks/result`: the method that created its task, whose result shape the answer has. */
  resultOf: string | undefined;
  /** The tool a `tools/call` (or the task a `tasks/result` asks for) named, while a fit policy is on. */
  tool: string | undefined;
}

/** An entry with only the fields every user knows, the decorator's fields not set yet. */
export function inFlight(id: RequestId, method: string, key: RequestKey = id): InFlightRequest {
  return { id, key, method, resultOf: undefined, tool: undefined };
}

export class RequestTable<E extends InFlightRequest = InFlightRequest> {
  private readonly byKey = new Map<RequestKey, E>();

  get size(): number {
    return this.byKey.size;
  }

  has(key: RequestKey): boolean {
    return this.byKey.has(key);
  }

  get(key: RequestKey): E | undefined {
    return this.byKey.get(key);
  }

  /** Adds a request (replacing one with the same id: whoever adds refuses reused ids first if it must). */
  add(entry: E): void {
    this.byKey.set(entry.key, entry);
  }

  /** Takes the request out of the table: it is no longer in flight. */
  take(key: RequestKey): E | undefined {
    const entry = this.byKey.get(key);
    if (entry !== undefined) this.byKey.delete(key);
    return entry;
  }

  /** The requests in flight, oldest first. */
  values(): IterableIterator<E> {
    return this.byKey.values();
  }

  clear(): void {
    this.byKey.clear();
  }
}
