/**
 * Encoding a resized image so its bytes fit `maxBytes`, in a format the host accepts. Formats
 * are tried in order (the source's own when allowed; PNG for lossless sources; then JPEG, or
 * WebP first when the image has transparency), JPEG and WebP at falling qualities; when nothing
 * fits, the image is made smaller and the ladder runs again.
 */
import type { ImageFormat } from "../settings.js";
import type { Sharp } from "./modules.js";

export interface Pixels {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
  readonly channels: 1 | 2 | 3 | 4;
}

export interface Encoded {
  readonly bytes: Buffer;
  readonly mime: ImageFormat;
  readonly width: number;
  readonly height: number;
  /** JPEG/WebP quality used, when lossy. */
  readonly quality?: number;
}

const LOSSY_QUALITIES = [85, 75, 60, 45] as const;
/**
 * Each further round shrinks both sides by this factor (the area roughly halves) — more when the
 * round's smallest encoding was so far over that even `LOWER_QUALITY_GAIN` times fewer bytes
 * (what lower qualities, skipped when far over, may give) would not fit at 0.7: bytes go roughly
 * with the area, so the sides then go by the square root of that. A huge image and a tiny
 * `maxBytes` take a few rounds, not two dozen at sizes that cost seconds each; a gain any lower
 * sent images far smaller than needed.
 */
const SHRINK = 0.7;
const LOWER_QUALITY_GAIN = 6;
/** Rounds enough to take any side allowed down to `MIN_SIDE` (0.7^24 of 2^16 px is under 16). */
const MAX_ROUNDS = 24;
/** An encoding this many times over maxBytes skips the lower qualities of its format. */
const FAR_OVER = 1.6;
/** Below this long side an image is not made smaller still. */
const MIN_SIDE = 16;

export function formatOrder(
  sourceMime: string,
  lossySource: boolean,
  alpha: boolean,
  allowed: readonly ImageFormat[],
): ImageFormat[] {
  const order: ImageFormat[] = [];
  const add = (format: ImageFormat): void => {
    if (allowed.includes(format) && !order.includes(format)) order.push(format);
  };
  if ((allowed as readonly string[]).includes(sourceMime)) add(sourceMime as ImageFormat);
  if (!lossySource) add("image/png");
  for (const format of alpha
    ? (["image/webp", "image/png", "image/jpeg"] as const)
    : (["image/jpeg", "image/webp", "image/png"] as const))
    add(format);
  add("image/gif");
  return order;
}

export async function encodeToFit(
  sharp: Sharp,
  pixels: Pixels,
  order: readonly ImageFormat[],
  maxBytes: number,
): Promise<Encoded | null> {
  let width = pixels.width;
  let height = pixels.height;
  let formats = order;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let smallest = Number.POSITIVE_INFINITY;
    const smallestOf = new Map<ImageFormat, number>();
    for (const mime of formats) {
      const qualities = mime === "image/jpeg" || mime === "image/webp" ? LOSSY_QUALITIES : [undefined];
      for (const quality of qualities) {
        const bytes = await encodeOnce(sharp, pixels, width, height, mime, quality);
        if (bytes.length <= maxBytes)
          return { bytes, mime, width, height, ...(quality === undefined ? {} : { quality }) };
        smallest = Math.min(smallest, bytes.length);
        smallestOf.set(mime, Math.min(smallestOf.get(mime) ?? Number.POSITIVE_INFINITY, bytes.length));
        // Far over: a lower quality will not close the gap; a smaller image will.
        if (bytes.length > maxBytes * FAR_OVER) break;
      }
    }
    // A format far larger than another at this size stays so when both shrink (bytes go with
    // the area): it cannot fit first, and encoding it again each round (a GIF's palette takes
    // seconds on a large image) only costs time.
    formats = formats.filter((mime) => (smallestOf.get(mime) ?? 0) <= smallest * FAR_OVER);
    if (Math.max(width, height) * SHRINK < MIN_SIDE) break;
    const scale = Math.max(
      Math.min(SHRINK, Math.sqrt((maxBytes * LOWER_QUALITY_GAIN) / smallest)),
      MIN_SIDE / Math.max(width, height),
    );
    width = Math.max(1, Math.round(width * scale));
    height = Math.max(1, Math.round(height * scale));
  }
  return null;
}

function encodeOnce(
  sharp: Sharp,
  pixels: Pixels,
  width: number,
  height: number,
  mime: ImageFormat,
  quality: number | undefined,
): Promise<Buffer> {
  let image = sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: pixels.channels } });
  if (width !== pixels.width || height !== pixels.height) image = image.resize(width, height, { fit: "fill" });
  switch (mime) {
    case "image/png":
      return image.png({ compressionLevel: 6 }).toBuffer();
    case "image/jpeg":
      // JPEG has no alpha: transparent pixels become white, as most viewers show them.
      return image
        .flatten({ background: "#ffffff" })
        .jpeg({ quality: quality ?? 85 })
        .toBuffer();
    case "image/webp":
      return image.webp({ quality: quality ?? 85 }).toBuffer();
    case "image/gif":
      return image.gif().toBuffer();
  }
}
