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
 * Keyed by the id itself, not a string made from it: a Map tells 1 from "1" (JSON-RPC ids of
 * different types are different ids) and takes 0 and -0 as one id, as JSON does. Entries are
 * kept in the order they were added.
 */
import type { RequestId } from "../transports/jsonrpc.js";

/** What every user of the table knows about a request in flight. */
export interface InFlightRequest {
  readonly id: RequestId;
  readonly method: string;
  /** For a `tasks/result`: the method that created its task, whose result shape the answer has. */
  resultOf: string | undefined;
  /** The tool a `tools/call` (or the task a `tasks/result` asks for) named, while a fit policy is on. */
  tool: string | undefined;
}

/** An entry with only the fields every user knows, the decorator's fields not set yet. */
export function inFlight(id: RequestId, method: string): InFlightRequest {
  return { id, method, resultOf: undefined, tool: undefined };
}

export class RequestTable<E extends InFlightRequest = InFlightRequest> {
  private readonly byId = new Map<RequestId, E>();

  get size(): number {
    return this.byId.size;
  }

  has(id: RequestId): boolean {
    return this.byId.has(id);
  }

  get(id: RequestId): E | undefined {
    return this.byId.get(id);
  }

  /** Adds a request (replacing one with the same id: whoever adds refuses reused ids first if it must). */
  add(entry: E): void {
    this.byId.set(entry.id, entry);
  }

  /** Takes the request out of the table: it is no longer in flight. */
  take(id: RequestId): E | undefined {
    const entry = this.byId.get(id);
    if (entry !== undefined) this.byId.delete(id);
    return entry;
  }

  /** The requests in flight, oldest first. */
  values(): IterableIterator<E> {
    return this.byId.values();
  }

  clear(): void {
    this.byId.clear();
  }
}
