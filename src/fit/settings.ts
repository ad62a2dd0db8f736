/**
 * What "fitting results to the host" may do, as the fit layer sees it once resolved for one
 * content block: the image limits, whether embedded resources are inlined, and the size above
 * which a tool result's text is cut and the rest served as pages. Everything is off unless asked.
 */

/** Formats an image may be sent in after fitting (what the encoder writes). */
export const IMAGE_FORMATS = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** Default `images.maxDimension`: the long side Claude's API recommends (larger is downscaled anyway). */
export const DEFAULT_IMAGE_MAX_DIMENSION = 1568;
/** Default `images.maxBytes`: decoded bytes of one image after fitting (1 MiB). */
export const DEFAULT_IMAGE_MAX_BYTES = 1024 * 1024;
/** Default `images.formats`: what every host that takes images accepts. */
export const DEFAULT_IMAGE_FORMATS: readonly ImageFormat[] = IMAGE_FORMATS;

/** Default `limits.imageMaxPixels`: width × height above which an image is refused before decoding (8192 × 8192). */
export const DEFAULT_IMAGE_MAX_PIXELS = 8192 * 8192;
/** Default `limits.fitTimeoutMs`: a message waits at most this long for its images to be fitted. */
export const DEFAULT_FIT_TIMEOUT_MS = 30_000;
/** Default `limits.fitConcurrency`: images decoded and encoded at the same time, over all sessions. */
export const DEFAULT_FIT_CONCURRENCY = 2;
/** Default `limits.spillTtlMs`: how long the pages of a cut tool result can be read. */
export const DEFAULT_SPILL_TTL_MS = 10 * 60_000;
/** Default `limits.spillMaxBytes`: UTF-8 bytes of pages held at once, over all sessions. */
export const DEFAULT_SPILL_MAX_BYTES = 64 * 1024 * 1024;
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

export const FIT_OFF: FitSettings = Object.freeze({
  images: null,
  embeddedResources: "keep",
  maxResultBytes: null,
  dryRun: false,
});

/** Limits of the fit layer (from `limits.*`). */
export interface FitLimits {
  readonly imageMaxPixels: number;
  readonly fitTimeoutMs: number;
  readonly fitConcurrency: number;
  readonly spillTtlMs: number;
  readonly spillMaxBytes: number;
}

export const DEFAULT_FIT_LIMITS: FitLimits = Object.freeze({
  imageMaxPixels: DEFAULT_IMAGE_MAX_PIXELS,
  fitTimeoutMs: DEFAULT_FIT_TIMEOUT_MS,
  fitConcurrency: DEFAULT_FIT_CONCURRENCY,
  spillTtlMs: DEFAULT_SPILL_TTL_MS,
  spillMaxBytes: DEFAULT_SPILL_MAX_BYTES,
});

/** `over` applied on top of `base`: given fields win; `images` merges field by field. */
export function mergeFitSettings(base: FitSettings, over: FitSettingsInput): FitSettings {
  let images = base.images;
  if (over.images === false) images = null;
  else if (over.images === true) images ??= defaultImages();
  else if (over.images !== undefined) images = { ...(images ?? defaultImages()), ...stripUndefined(over.images) };
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

function defaultImages(): ImageSettings {
  return {
    maxDimension: DEFAULT_IMAGE_MAX_DIMENSION,
    maxBytes: DEFAULT_IMAGE_MAX_BYTES,
    formats: DEFAULT_IMAGE_FORMATS,
    resources: false,
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** True when the settings ask for nothing: the fit layer can be skipped. */
export function isFitOff(settings: FitSettings): boolean {
  return settings.images === null && settings.embeddedResources === "keep" && settings.maxResultBytes === null;
}
