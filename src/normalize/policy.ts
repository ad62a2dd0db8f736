/**
 * The normalization policy: the engine's options, resolved for one entry. The config layer
 * validates user input (src/config), fills what it leaves out from its defaults and hands a
 * complete `PolicyOptions` in; the engine only ever sees complete, resolved values.
 */
import { DetectionBudget, UNLIMITED_DETECTION } from "./charsetDetection.js";
import { Glob } from "./glob.js";
import { DEFAULT_EXTRA_TEXTUAL } from "./mimeTables.js";
import type { MediaType } from "./mediaType.js";

export interface RuleSwitches {
  /** `blob` whose bytes are UTF-8 text → `text`. */
  unwrapBlobs: boolean;
  /** BOM or declared non-UTF-8 charset → decoded `text`. */
  transcode: boolean;
  /** Binary strings and surrogate-escaped text → `blob` of the original bytes. */
  reencodeBinaryText: boolean;
  /** Missing, generic or contradicted `mimeType` → corrected. */
  fixMime: boolean;
  /** `image`/`audio` blocks: `mimeType` from the bytes' signature. */
  media: boolean;
  /** Textual bytes with no declared charset that are not UTF-8: guess the charset (charsetDetection.ts). */
  detectCharset: boolean;
}

export interface PolicySettings extends RuleSwitches {
  /** "preserve": textual bytes in a non-UTF-8 charset stay a blob labelled `;charset=X`. */
  charset: "transcode" | "preserve";
  /** Entries whose `text`/`blob` string is longer than this many UTF-8 bytes pass untouched. */
  maxNormalizeBytes: number;
  /** Essences treated as textual on top of the built-in list. */
  extraTextualTypes: readonly string[];
  /** Records are computed; contents go out unchanged. */
  dryRun: boolean;
}

export interface PolicyRule {
  /** Glob over the URI: `*` within a path segment, `**` across segments. */
  uri?: string;
  /** An essence (`text/markdown`) or a type wildcard (`image/*`). */
  mimeType?: string;
  /** Settings that apply to entries matching every condition given. */
  set: Partial<PolicySettings>;
}

/**
 * What the caller chooses: every setting (the config's defaults fill what a config leaves out;
 * the engine has none of its own), and the rules.
 */
export interface PolicyOptions extends PolicySettings {
  rules?: readonly PolicyRule[];
  /**
   * Whether a resource entry left as it was gets a record (action `none`). Default true; false
   * when nothing reads such records (no metrics, a log that drops them): the entry is then not
   * measured at all.
   */
  recordUnchanged?: boolean;
  /**
   * Bytes charset detection may read over one message's entries (`limits.charsetDetectionBytes`);
   * entries past it keep their bytes. Left out: no bound.
   */
  charsetDetectionBytes?: number;
}

/** Options as a caller may give them, some left out: the layer that compiles them fills the rest. */
export type PolicyInput = Partial<PolicyOptions>;

export interface ResolvedPolicy extends PolicySettings {
  readonly textual: ReadonlySet<string>;
}

/** A compiled policy: rules compiled once, resolved per entry. */
export class Policy {
  readonly base: ResolvedPolicy;
  private readonly rules: ReadonlyArray<{ uri: Glob | null; mime: string | null; set: Partial<PolicySettings> }>;
  private readonly cache = new Map<string, ResolvedPolicy>();
  /** See `PolicyOptions.recordUnchanged`. */
  readonly recordUnchanged: boolean;
  private readonly charsetDetectionBytes: number | undefined;

  constructor(options: PolicyOptions) {
    const { rules = [], recordUnchanged = true, charsetDetectionBytes, ...settings } = options;
    this.recordUnchanged = recordUnchanged;
    this.charsetDetectionBytes = charsetDetectionBytes;
    this.base = resolve(settings);
    this.rules = rules.map((rule) => ({
      uri: rule.uri === undefined ? null : new Glob(rule.uri),
      mime: rule.mimeType === undefined ? null : rule.mimeType.trim().toLowerCase(),
      set: stripUndefined(rule.set),
    }));
  }

  /** What charset detection may read for one message: a new budget for each. */
  detectionBudget(): DetectionBudget {
    return this.charsetDetectionBytes === undefined
      ? UNLIMITED_DETECTION
      : new DetectionBudget(this.charsetDetectionBytes);
  }

  /** The settings for one entry, after every matching rule (later rules win). */
  for(uri: unknown, declared: MediaType | null): ResolvedPolicy {
    if (this.rules.length === 0) return this.base;
    const matched: number[] = [];
    this.rules.forEach((rule, index) => {
      if (rule.uri !== null && !(typeof uri === "string" && rule.uri.test(uri))) return;
      if (rule.mime !== null && !mimeMatches(rule.mime, declared)) return;
      matched.push(index);
    });
    if (matched.length === 0) return this.base;
    const key = matched.join(",");
    let found = this.cache.get(key);
    if (found === undefined) {
      let merged: PolicySettings = { ...this.base };
      for (const index of matched) merged = { ...merged, ...this.rules[index]!.set };
      found = resolve(merged);
      this.cache.set(key, found);
    }
    return found;
  }
}

function resolve(settings: PolicySettings): ResolvedPolicy {
  const textual = new Set([...DEFAULT_EXTRA_TEXTUAL, ...settings.extraTextualTypes.map((t) => t.trim().toLowerCase())]);
  return { ...settings, textual };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function mimeMatches(pattern: string, declared: MediaType | null): boolean {
  if (declared === null) return false;
  if (pattern.endsWith("/*")) return declared.type === pattern.slice(0, -2);
  return declared.essence === pattern;
}
