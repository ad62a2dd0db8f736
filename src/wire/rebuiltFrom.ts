/**
 * Which object a rebuilt one was made from (a message the engine, the fit layer or the stateless
 * pool rebuilt; the engine's and the fit layer's blocks with a member replaced): the writer of a
 * message that arrived as text finds, by it, the text the message came in, and the old block a
 * rebuilt block stands for where blocks moved — so the members they kept go out as written
 * (numbers that `JSON.parse` rounds among them). Always the first object of a chain: the one that
 * was parsed.
 */
const FROM = new WeakMap<object, object>();

export function noteRebuilt(rebuilt: object, from: object): void {
  if (rebuilt !== from) FROM.set(rebuilt, FROM.get(from) ?? from);
}

/** The object `value` was rebuilt from, if it was. */
export function rebuiltFromOf(value: object): object | undefined {
  return FROM.get(value);
}
