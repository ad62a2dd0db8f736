/**
 * The fit settings compiled once per server: the global `normalize` fit keys, the server's own
 * over them, then `normalize.rules` matched per block — by the URI of an embedded resource, the
 * block's mimeType, and (fit rules only) the name of the tool whose result it is. Later rules win.
 */
import { parseMediaType, type MediaType } from "../normalize/mediaType.js";
import { Glob } from "../normalize/glob.js";
import {
  isFitOff,
  mergeFitSettings,
  resolveFitSettings,
  type FitSettings,
  type FitSettingsInput,
  type ImageSettings,
} from "./settings.js";

export interface FitRule {
  uri?: string | undefined;
  mimeType?: string | undefined;
  /** Glob over the tool name (`tools/call` results only). */
  tool?: string | undefined;
  set: FitSettingsInput;
}

/** Every fit key (the caller fills what the config leaves out from its defaults), and the rules. */
export interface FitPolicyOptions extends Required<FitSettingsInput> {
  rules?: readonly FitRule[] | undefined;
}

/** Fit keys as a caller may give them, some left out: the layer that compiles them fills the rest. */
export interface FitPolicyInput extends FitSettingsInput {
  rules?: readonly FitRule[] | undefined;
}

interface CompiledRule {
  readonly uri: Glob | null;
  readonly mime: string | null;
  readonly tool: Glob | null;
  readonly set: FitSettingsInput;
}

const FIT_KEYS = ["images", "embeddedResources", "maxResultBytes", "dryRun"] as const;

export class FitPolicy {
  readonly base: FitSettings;
  /** False when no block of any result can be changed: the fit layer is skipped entirely. */
  readonly active: boolean;
  /** True when some setting may cut results (pages are then served, resources declared). */
  readonly mayCut: boolean;
  /** True when some setting may fit images in `resources/read` results. */
  readonly mayFitResources: boolean;
  private readonly rules: readonly CompiledRule[];
  private readonly cache = new Map<string, FitSettings>();

  /** `imageDefaults`: what `images: true` means and what an `images` object leaves out (the config's). */
  constructor(
    options: FitPolicyOptions,
    private readonly imageDefaults: ImageSettings,
  ) {
    const { rules = [], ...settings } = options;
    this.base = resolveFitSettings(settings, imageDefaults);
    this.rules = rules
      .filter((rule) => FIT_KEYS.some((key) => rule.set[key] !== undefined))
      .map((rule) => ({
        uri: rule.uri === undefined ? null : new Glob(rule.uri),
        mime: rule.mimeType === undefined ? null : rule.mimeType.trim().toLowerCase(),
        tool: rule.tool === undefined ? null : new Glob(rule.tool),
        set: rule.set,
      }));
    const all = [this.base, ...this.rules.map((rule) => mergeFitSettings(this.base, rule.set, imageDefaults))];
    this.active = all.some((s) => !isFitOff(s));
    this.mayCut = all.some((s) => s.maxResultBytes !== null);
    this.mayFitResources = all.some((s) => s.images?.resources === true);
  }

  /** The settings for one block. */
  for(uri: string | null, mimeType: unknown, tool: string | null): FitSettings {
    if (this.rules.length === 0) return this.base;
    const declared = typeof mimeType === "string" ? parseMediaType(mimeType) : null;
    let key = "";
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i]!;
      if (rule.uri !== null && !(uri !== null && rule.uri.test(uri))) continue;
      if (rule.mime !== null && !mimeMatches(rule.mime, declared)) continue;
      if (rule.tool !== null && !(tool !== null && rule.tool.test(tool))) continue;
      key += `${i},`;
    }
    if (key === "") return this.base;
    let found = this.cache.get(key);
    if (found === undefined) {
      found = this.base;
      for (const index of key.split(",").slice(0, -1))
        found = mergeFitSettings(found, this.rules[Number(index)]!.set, this.imageDefaults);
      if (this.cache.size < 1024) this.cache.set(key, found);
    }
    return found;
  }
}

function mimeMatches(pattern: string, declared: MediaType | null): boolean {
  if (declared === null) return false;
  if (pattern.endsWith("/*")) return declared.type === pattern.slice(0, -2);
  return declared.essence === pattern;
}
