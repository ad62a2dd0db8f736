/**
 * A message the proxy rebuilt (the engine rewrote an entry of it, the stateless pool gave it the
 * host's id) is written with every part it did not touch as the text that part arrived in: a
 * tool's `structuredContent`, `_meta`, unknown fields, the entries left as they were. Serializing
 * them again would change what `JSON.parse` cannot carry — integers past 2^53, `-0`, `1.10`,
 * `1e400`, the order of integer-like keys — and the proxy promises to forward what it does not
 * own unchanged.
 *
 * The rebuilt message remembers the one it was built from (`rememberOrigin`); when that one
 * arrived as text (wireText.ts), `withOriginText` walks both together: a member or item that is
 * the very same value in both becomes the original's text (`RawJsonValue`); one that changed is
 * walked into, or written anew. Only the path down to what changed is scanned, and only when
 * `JSON.stringify` would not write the original back as it came (most servers write exactly that
 * text: then the rebuilt message is serialized as it is, and its shared parts come out the same).
 */
import { containerEnds } from "../wire/containerEnds.js";
import { type ContainerEndOf, itemSpans, memberSpans, skipSpace, type Span } from "../wire/jsonText.js";
import { RAW_MARK, RawJsonValue } from "../wire/rawJson.js";
import { noteRebuilt, rebuiltFromOf } from "../wire/rebuiltFrom.js";
import { wireSkeletonOf, wireTextOf } from "./wireText.js";
import { lowerBound } from "../wire/lowerBound.js";

/**
 * Records that `rebuilt` was built from `original` (sharing what it did not change), where the
 * engine's `rebuild` did not already: the same record, read back by `rebuiltFromOf`.
 */
export function rememberOrigin(rebuilt: unknown, original: unknown): void {
  if (typeof rebuilt !== "object" || rebuilt === null) return;
  if (typeof original !== "object" || original === null) return;
  noteRebuilt(rebuilt, original);
}

/**
 * `message` with its untouched parts as `RawJsonValue`s of the text they arrived in, ready for
 * `stringifyWithRaw`; undefined when it was not rebuilt from a message that came as text.
 */
export function withOriginText(message: unknown): unknown {
  if (typeof message !== "object" || message === null) return undefined;
  const origin = rebuiltFromOf(message);
  if (origin === undefined) return undefined;
  const plain = wireTextOf(origin);
  // No number, key order, escape or duplicate that JSON.stringify would change: nothing to keep.
  if (plain !== undefined && writtenAsStringifyWould(origin, plain)) return undefined;
  // A big message read with its payloads as bytes: the text around them, stand-ins where they were.
  const text = plain ?? wireSkeletonOf(origin)?.text;
  if (text === undefined) return undefined;
  return substitute(message, origin, new Source(text, plain === undefined), skipSpace(text, 0));
}

/** Whether each origin's text is what `JSON.stringify` writes for it, once worked out. */
const CANONICAL = new WeakMap<object, boolean>();

function writtenAsStringifyWould(origin: object, text: string): boolean {
  let canonical = CANONICAL.get(origin);
  if (canonical === undefined) {
    try {
      canonical = JSON.stringify(origin) === text;
    } catch {
      // Nested deeper than JSON.stringify goes: walked, so its untouched parts go out as their text.
      canonical = false;
    }
    CANONICAL.set(origin, canonical);
  }
  return canonical;
}

/**
 * True when `message` arrived as the very text `JSON.stringify` writes for it, as found when a
 * message rebuilt from it was serialized (undefined when nobody has looked).
 */
export function arrivedAsStringified(message: object): boolean | undefined {
  return CANONICAL.get(message);
}

/**
 * The text walked: the origin's, and whether it holds raw strings' stand-ins (a skeleton). Where
 * its containers end and where its stand-ins are is worked out once, on first need: the walk
 * goes level by level and must not scan what lies below a level again at each one.
 */
class Source {
  #endOf: ContainerEndOf | undefined;
  #standIns: number[] | undefined;

  constructor(
    readonly text: string,
    readonly standIns: boolean,
  ) {}

  get endOf(): ContainerEndOf {
    this.#endOf ??= containerEnds(this.text);
    return this.#endOf;
  }

  /** Whether the text at `span` holds a raw string's stand-in. */
  holdsStandIn(span: Span): boolean {
    if (!this.standIns) return false;
    this.#standIns ??= indexesOf(this.text, RAW_MARK);
    const at = this.#standIns;
    const first = lowerBound(at, span.start);
    return first < at.length && at[first]! < span.end;
  }
}

/** Where `needle` stands in `text`, in order. */
function indexesOf(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/** A plain object or array: what `JSON.parse` builds (a value with its own `toJSON` is written as it is). */
function isPlain(value: unknown): value is object {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `next` (a changed value) with what it shares with `prev` — the value at `start` in `text` — as
 * text. A container `next` holds that `prev` holds too, wherever it now is, is written as its own
 * text. A number, or a changed container walked into, takes the text at the same place in `prev`
 * only where places still correspond: a member of the same name, or an item of an array whose
 * items did not move (the fit layer inserts blocks: what follows moves up).
 */
function substitute(next: unknown, prev: unknown, source: Source, start: number): unknown {
  const { text } = source;
  const open = text.charCodeAt(start);
  if (Array.isArray(next) && Array.isArray(prev) && open === 0x5b) {
    const spans = itemSpans(text, start, source.endOf);
    const shared = sharedContainers(prev, spans);
    const inNext = new Set(next.filter(isPlain));
    const aligned =
      next.length === prev.length && next.every((item, i) => !isPlain(item) || !shared.has(item) || prev[i] === item);
    if (aligned) return next.map((item, i) => slot(item, prev[i], spans[i], shared, inNext, source));
    // Items moved: a changed item is walked against the old item it still shares a member with
    // (a block the fit layer cut keeps its `_meta` and `annotations`).
    const partners = partnersOf(prev, inNext);
    return next.map((item) => {
      const partner = partnerIn(item, partners);
      return slot(
        item,
        partner === undefined ? undefined : prev[partner],
        spans[partner ?? -1],
        shared,
        inNext,
        source,
      );
    });
  }
  if (isPlain(next) && !Array.isArray(next) && isPlain(prev) && !Array.isArray(prev) && open === 0x7b) {
    const spans = memberSpans(text, start, source.endOf);
    const prevObject = prev as Record<string, unknown>;
    const shared = sharedMembers(prevObject, spans, source);
    const inNext = new Set(Object.values(next).filter(isPlain));
    // No prototype: a member named `__proto__` stays a member.
    const out: Record<string, unknown> = Object.create(null);
    const strings = !isEntryOrBlock(next as Record<string, unknown>);
    for (const [key, value] of Object.entries(next)) {
      const here = Object.hasOwn(prevObject, key);
      out[key] = slot(
        value,
        here ? prevObject[key] : undefined,
        here ? spans.get(key) : undefined,
        shared,
        inNext,
        source,
        strings,
      );
    }
    return out;
  }
  return next;
}

/**
 * The containers among `prev`'s members, each with its own span, and among the members of those
 * that are objects: a block the fit layer made of an embedded resource's entry (inlined as text)
 * carries the entry's `_meta`, which stood one level further down.
 */
function sharedMembers(
  prev: Record<string, unknown>,
  spans: ReadonlyMap<string, Span>,
  source: Source,
): Map<unknown, Span> {
  const shared = new Map<unknown, Span>();
  for (const [key, span] of spans) {
    const member = Object.hasOwn(prev, key) ? prev[key] : undefined;
    if (!isPlain(member)) continue;
    shared.set(member, span);
    if (Array.isArray(member) || source.text.charCodeAt(span.start) !== 0x7b) continue;
    const inner = member as Record<string, unknown>;
    for (const [innerKey, innerSpan] of memberSpans(source.text, span.start, source.endOf)) {
      const value = Object.hasOwn(inner, innerKey) ? inner[innerKey] : undefined;
      if (isPlain(value) && !shared.has(value)) shared.set(value, innerSpan);
    }
  }
  return shared;
}

/**
 * A resource entry or a content block (a `uri` or a `type`): what the engine and the fit layer
 * rewrite as their own. Its strings are written as `JSON.stringify` writes them, as its records
 * count them; elsewhere a string beside a change is the server's and keeps its text.
 */
function isEntryOrBlock(value: Record<string, unknown>): boolean {
  return typeof value.uri === "string" || typeof value.type === "string";
}

/**
 * The old items no longer in the new array, by the containers among their members and their
 * members' members (an embedded resource rebuilt around its entry keeps the entry's `_meta`).
 */
function partnersOf(prev: readonly unknown[], inNext: ReadonlySet<unknown>): Map<unknown, number> {
  const partners = new Map<unknown, number>();
  prev.forEach((item, i) => {
    if (!isPlain(item) || Array.isArray(item) || inNext.has(item)) return;
    partners.set(item, i);
    for (const member of containersIn(item)) partners.set(member, i);
  });
  return partners;
}

/**
 * The index of the old item a changed new item was rebuilt from (`rebuiltFromOf`: a block of
 * plain values has no container to tell it by), or shares a container with; none if neither.
 */
function partnerIn(item: unknown, partners: ReadonlyMap<unknown, number>): number | undefined {
  if (!isPlain(item) || Array.isArray(item) || partners.size === 0) return undefined;
  const from = rebuiltFromOf(item);
  const rebuiltFrom = from === undefined ? undefined : partners.get(from);
  if (rebuiltFrom !== undefined) return rebuiltFrom;
  for (const member of containersIn(item)) {
    const found = partners.get(member);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The containers among an object's members, and among the members of those that are objects. */
function* containersIn(item: object): Generator<object> {
  for (const member of Object.values(item)) {
    if (!isPlain(member)) continue;
    yield member;
    if (!Array.isArray(member)) for (const inner of Object.values(member)) if (isPlain(inner)) yield inner;
  }
}

/** The containers among `prev`'s items, each with its own span. */
function sharedContainers(prev: readonly unknown[], spans: readonly Span[]): Map<unknown, Span> {
  const shared = new Map<unknown, Span>();
  prev.forEach((item, i) => {
    if (isPlain(item) && spans[i] !== undefined) shared.set(item, spans[i]);
  });
  return shared;
}

/**
 * One member or item: `prev`/`span` are what stood at the same place (undefined when places do
 * not correspond); `shared` maps the original's containers to their own spans; `inNext` holds the
 * containers the new value keeps (a place whose old container moved elsewhere is not walked).
 */
function slot(
  value: unknown,
  prev: unknown,
  span: Span | undefined,
  shared: ReadonlyMap<unknown, Span>,
  inNext: ReadonlySet<unknown>,
  source: Source,
  strings = true,
): unknown {
  const { text } = source;
  if (value === undefined) return value;
  if (isPlain(value)) {
    const own = shared.get(value);
    if (own !== undefined) {
      // Holding a raw string's stand-in: walked into, so the raw string itself is written.
      if (source.holdsStandIn(own)) return substitute(value, value, source, own.start);
      return new RawJsonValue(text.slice(own.start, own.end));
    }
    if (span !== undefined && isPlain(prev) && !inNext.has(prev)) return substitute(value, prev, source, span.start);
    return value;
  }
  // Booleans and null are written the same again; a number or a string (`strings`: not in an
  // entry or block rewritten) keeps its text when it stands where it stood and that text is not
  // what JavaScript writes for it (`1.10`, `-0`; a string escaped otherwise: `\u00e9`, `\/`).
  if (span === undefined || value !== prev) return value;
  if (typeof value === "number") {
    const written = text.slice(span.start, span.end);
    return written === String(value) ? value : new RawJsonValue(written);
  }
  if (typeof value === "string" && strings) return stringAsWritten(value, span, source);
  return value;
}

/**
 * A string as its text at `span` writes it, when that is not `JSON.stringify`'s: only a text with
 * a backslash can differ (unescaped, a string has one way to be written), and only that one is
 * serialized to compare.
 */
function stringAsWritten(value: string, span: Span, source: Source): unknown {
  const { text } = source;
  // Within the span only: the text past it is other members' (a search on would cost each string the rest of the text).
  let slash = span.start;
  while (slash < span.end && text.charCodeAt(slash) !== 0x5c) slash++;
  if (slash === span.end || source.holdsStandIn(span)) return value;
  const written = text.slice(span.start, span.end);
  return written === JSON.stringify(value) ? value : new RawJsonValue(written);
}
