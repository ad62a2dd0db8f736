/**
 * One image's bytes in, the verdict out: kept as they are (within the limits, in an allowed
 * format — known from a header read, nothing decoded), fitted (resized and re-encoded), or left
 * alone with a warning (undecodable, too many pixels, cannot be made small enough). Never throws.
 */
import type { ImageFormat, ImageSettings } from "../settings.js";
import { decodeBmp } from "./bmp.js";
import { encodeToFit, formatOrder, type Pixels } from "./encode.js";
import { decodeIcon } from "./ico.js";
import { loadSharp, type Sharp } from "./modules.js";
import { ImageRefusal, refuseOverPixels, type EncodedImage, type RawPixels } from "./rawPixels.js";
import { sourceKind, type SourceKind } from "./sourceKind.js";
import { renderSvg } from "./svg.js";

export type ImageWarning =
  | "warn-image-undecodable"
  | "warn-image-too-many-pixels"
  | "warn-image-unfittable"
  | "warn-image-timeout";

export type ImageFit =
  | { readonly kind: "keep"; readonly reason: string }
  | { readonly kind: "fitted"; readonly bytes: Buffer; readonly mime: ImageFormat; readonly reason: string }
  | { readonly kind: "warn"; readonly action: ImageWarning; readonly reason: string };

export interface FitImageOptions {
  readonly maxPixels: number;
  /** Aborts an SVG render still running (sharp's work cannot be aborted; its result is dropped). */
  readonly signal?: AbortSignal;
  /**
   * The settings for what the bytes are, once known (rules match declared types: a server may
   * label an SVG `image/png`); null when a rule turns images off for that type.
   */
  readonly settingsAs?: (mime: string) => ImageSettings | null;
}

export async function fitImage(bytes: Buffer, settings: ImageSettings, options: FitImageOptions): Promise<ImageFit> {
  try {
    return await fitOrRefuse(settings, bytes, options);
  } catch (error) {
    if (error instanceof ImageRefusal) return { kind: "warn", action: error.action, reason: error.message };
    return { kind: "warn", action: "warn-image-undecodable", reason: `image does not decode: ${firstLine(error)}` };
  }
}

async function fitOrRefuse(declared: ImageSettings, bytes: Buffer, options: FitImageOptions): Promise<ImageFit> {
  const source = sourceKind(bytes);
  if (source === null)
    return {
      kind: "warn",
      action: "warn-image-undecodable",
      reason: "not a PNG, JPEG, GIF, WebP, TIFF, AVIF, HEIC, BMP, ICO or SVG image",
    };
  const settings = options.settingsAs === undefined ? declared : options.settingsAs(source.mime);
  if (settings === null) return { kind: "keep", reason: `images are off for ${source.mime} (a rule)` };
  const sharp = await loadSharp();
  let input: Buffer | RawPixels | EncodedImage = bytes;
  let from: { width: number; height: number };
  let note = "";
  switch (source.decoder) {
    case "sharp": {
      const meta = await readHeader(sharp, bytes, source.mime);
      refuseOverPixels(meta.width, meta.height, options.maxPixels, source.mime);
      from = meta;
      const why = overLimits(source.mime, bytes.length, meta, settings);
      if (why.length === 0)
        return { kind: "keep", reason: `${describe(source.mime, meta, bytes.length)} within the limits` };
      note = why.join(", ");
      break;
    }
    case "bmp":
      input = await decodeBmp(bytes, options.maxPixels, options.signal);
      from = input;
      break;
    case "ico":
      input = decodeIcon(bytes, options.maxPixels);
      from = input.kind === "raw" ? input : await readHeader(sharp, input.bytes, "icon entry");
      if (input.kind === "encoded") refuseOverPixels(from.width, from.height, options.maxPixels, "icon entry");
      break;
    case "svg": {
      const rendered = await renderSvg(bytes, settings.maxDimension, options.signal);
      input = { kind: "encoded", bytes: rendered.png };
      from = { width: rendered.sourceWidth, height: rendered.sourceHeight };
      if (rendered.neutralized > 0) note = `${rendered.neutralized} external reference(s) neutralized`;
      break;
    }
  }
  if (note === "") note = `${source.mime} is not among formats`;
  const pixels = await resizeToPixels(sharp, input, settings.maxDimension, options.maxPixels);
  const order = formatOrder(
    source.mime,
    source.lossy,
    pixels.channels === 2 || pixels.channels === 4,
    settings.formats,
  );
  const encoded = await encodeToFit(sharp, pixels, order, settings.maxBytes);
  const before = describe(source.mime, from, bytes.length);
  if (encoded === null)
    return {
      kind: "warn",
      action: "warn-image-unfittable",
      reason: `${before}: no encoding in ${settings.formats.join(", ")} fits maxBytes ${settings.maxBytes}`,
    };
  const quality = encoded.quality === undefined ? "" : ` (quality ${encoded.quality})`;
  return {
    kind: "fitted",
    bytes: encoded.bytes,
    mime: encoded.mime,
    reason:
      `${before} → ${encoded.width}×${encoded.height} ${encoded.mime}${quality}, ${encoded.bytes.length} ` +
      `bytes: ${note}`,
  };
}

/** Width and height as displayed (EXIF orientation applied), from the header alone. */
async function readHeader(sharp: Sharp, bytes: Buffer, what: string): Promise<{ width: number; height: number }> {
  let meta: Awaited<ReturnType<ReturnType<Sharp>["metadata"]>>;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new ImageRefusal("warn-image-undecodable", `${what} header does not read: ${firstLine(error)}`);
  }
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!(width > 0 && height > 0)) throw new ImageRefusal("warn-image-undecodable", `${what} declares no pixels`);
  return { width, height };
}

function overLimits(
  mime: string,
  size: number,
  meta: { width: number; height: number },
  settings: ImageSettings,
): string[] {
  const why: string[] = [];
  if (!(settings.formats as readonly string[]).includes(mime)) why.push(`${mime} is not among formats`);
  if (Math.max(meta.width, meta.height) > settings.maxDimension) why.push(`over maxDimension ${settings.maxDimension}`);
  if (size > settings.maxBytes) why.push(`over maxBytes ${settings.maxBytes}`);
  return why;
}

/**
 * Decoded, oriented, sRGB, 8 bits per channel, no larger than `maxDimension`; an alpha channel
 * only when some pixel is not opaque.
 */
async function resizeToPixels(
  sharp: Sharp,
  input: Buffer | RawPixels | EncodedImage,
  maxDimension: number,
  maxPixels: number,
): Promise<Pixels> {
  const image =
    Buffer.isBuffer(input) || input.kind === "encoded"
      ? sharp(Buffer.isBuffer(input) ? input : input.bytes, {
          limitInputPixels: maxPixels,
          failOn: "error",
        }).autoOrient()
      : sharp(input.data, { raw: { width: input.width, height: input.height, channels: 4 } });
  if (!Buffer.isBuffer(input) && input.kind === "raw" && !input.alpha) image.removeAlpha();
  const { data, info } = await image
    .resize(maxDimension, maxDimension, { fit: "inside", withoutEnlargement: true })
    .toColourspace("srgb")
    .raw({ depth: "uchar" })
    .toBuffer({ resolveWithObject: true });
  let pixels: Pixels = { data, width: info.width, height: info.height, channels: info.channels };
  if (pixels.channels === 2 || pixels.channels === 4) {
    const stats = await sharp(data, {
      raw: { width: info.width, height: info.height, channels: info.channels },
    }).stats();
    if (stats.isOpaque) {
      const opaque = await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      pixels = {
        data: opaque.data,
        width: opaque.info.width,
        height: opaque.info.height,
        channels: opaque.info.channels,
      };
    }
  }
  return pixels;
}

function describe(mime: string, size: { width: number; height: number }, bytes: number): string {
  return `${size.width}×${size.height} ${mime}, ${bytes} bytes`;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0]!.slice(0, 200);
}

export type { SourceKind };
