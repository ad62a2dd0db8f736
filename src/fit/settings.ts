/**
 * What "fitting results to the host" may do, as the fit layer sees it once resolved for one
 * content block: the image limits, whether embedded resources are inlined, and the size above
 * which a tool result's text is cut and the rest served as pages. The caller gives every key
 * (the config's defaults fill what a config leaves out); nothing here has a default of its own.
 */

/** Formats an image may be sent in after fitting (what the encoder writes). */
export const IMAGE_FORMATS = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** The smallest `maxResultBytes` accepted: below it a page could not hold a long grapheme. */
export const MIN_RESULT_BYTES = 1024;

export interface ImageSettings {
  /** Longest side in pixels. */
  readonly maxDimension: number;
  /** Bytes of the image itself (not of its base64). */
  readonly maxBytes: number;
  /** Formats the host accepts; an image in another format is converted. */
  readonly formats: readonly ImageFormat[];
  /** Also fit `image/*` blobs in `resources/read` results. */
  readonly resources: boolean;
}

/** `images` as written in config: `true` for the defaults, `false` to turn fitting off, or fields. */
export type ImageOptions = boolean | Partial<ImageSettings>;

export interface FitSettingsInput {
  images?: ImageOptions | undefined;
  embeddedResources?: "keep" | "inline" | undefined;
  /** A positive number of bytes, or `false` to turn cutting off (e.g. in a rule or for one server). */
  maxResultBytes?: number | false | undefined;
  dryRun?: boolean | undefined;
}

export interface FitSettings {
  /** Null: images pass as they are. */
  readonly images: ImageSettings | null;
  readonly embeddedResources: "keep" | "inline";
  /** Null: results are never cut. */
  readonly maxResultBytes: number | null;
  /** Records are computed, the original goes out. */
  readonly dryRun: boolean;
}

/** Limits of the fit layer (from `limits.*`). */
export interface FitLimits {
  readonly imageMaxPixels: number;
  readonly fitTimeoutMs: number;
  /** Bytes held behind a fitted result when the transport cannot stop reading (`limits.fitHeldBytes`). */
  readonly fitHeldBytes?: number;
  readonly fitConcurrency: number;
  readonly spillTtlMs: number;
  readonly spillMaxBytes: number;
}

/** Every key given, as written in config (`false` turns images or cutting off), resolved. */
export function resolveFitSettings(given: Required<FitSettingsInput>, imageDefaults: ImageSettings): FitSettings {
  return {
    images:
      given.images === false
        ? null
        : given.images === true
          ? imageDefaults
          : { ...imageDefaults, ...stripUndefined(given.images) },
    embeddedResources: given.embeddedResources,
    maxResultBytes: given.maxResultBytes === false ? null : given.maxResultBytes,
    dryRun: given.dryRun,
  };
}

/**
 * `over` applied on top of `base`: given fields win; `images` merges field by field. `imageDefaults`
 * (the config's) is what `images: true` means, and what an `images` object leaves out.
 */
export function mergeFitSettings(base: FitSettings, over: FitSettingsInput, imageDefaults: ImageSettings): FitSettings {
  let images = base.images;
  if (over.images === false) images = null;
  else if (over.images === true) images ??= imageDefaults;
  else if (over.images !== undefined) images = { ...(images ?? imageDefaults), ...stripUndefined(over.images) };
  return {
    images,
    embeddedResources: over.embeddedResources ?? base.embeddedResources,
    maxResultBytes:
      over.maxResultBytes === undefined
        ? base.maxResultBytes
        : over.maxResultBytes === false
          ? null
          : over.maxResultBytes,
    dryRun: over.dryRun ?? base.dryRun,
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** True when the settings ask for nothing: the fit layer can be skipped. */
export function isFitOff(settings: FitSettings): boolean {
  return settings.images === null && settings.embeddedResources === "keep" && settings.maxResultBytes === null;
}
