/**
 * Windows icons: a directory of images, each a PNG or a headerless BMP (with an AND mask for
 * transparency). The directory and each entry's declared size are checked first (entries within
 * the file, a bounded count, sizes under the pixel limit); then decode-ico decodes them and the
 * largest one is kept. A PNG entry goes to sharp as it is.
 */
import decodeIco from "decode-ico";
import { ImageRefusal, refuseOverPixels, type EncodedImage, type RawPixels } from "./rawPixels.js";

/** More entries than any real icon has (Windows uses up to ~10 sizes). */
const MAX_ENTRIES = 64;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function decodeIcon(bytes: Buffer, maxPixels: number): RawPixels | EncodedImage {
  const count = bytes.readUInt16LE(4);
  if (count === 0 || count > MAX_ENTRIES)
    throw new ImageRefusal("warn-image-undecodable", `icon with ${count} entries (at most ${MAX_ENTRIES} are read)`);
  if (bytes.length < 6 + 16 * count) throw new ImageRefusal("warn-image-undecodable", "icon directory is truncated");
  let total = 0;
  for (let i = 0; i < count; i++) {
    const entry = 6 + 16 * i;
    const size = bytes.readUInt32LE(entry + 8);
    const offset = bytes.readUInt32LE(entry + 12);
    if (offset + size > bytes.length || size < 16)
      throw new ImageRefusal("warn-image-undecodable", `icon entry ${i} lies outside the file`);
    const [width, height] = entryPixels(bytes, offset);
    refuseOverPixels(width, height, maxPixels, `icon entry ${i}`);
    total += width * height;
  }
  refuseOverPixels(total, 1, maxPixels, "icon (all entries together)");
  let entries: ReturnType<typeof decodeIco>;
  try {
    entries = decodeIco(bytes);
  } catch (error) {
    throw new ImageRefusal(
      "warn-image-undecodable",
      `icon does not decode: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const best = entries.reduce((a, b) =>
    b.width * b.height > a.width * a.height || (b.width * b.height === a.width * a.height && b.bpp > a.bpp) ? b : a,
  );
  if (best.type === "png")
    return { kind: "encoded", bytes: Buffer.from(best.data.buffer, best.data.byteOffset, best.data.byteLength) };
  const data = Buffer.from(best.data.buffer, best.data.byteOffset, best.data.byteLength);
  // A 32-bit entry whose alpha bytes are all 0 was written before alpha was read (Windows then
  // goes by the AND mask, which decode-ico does not apply to it): opaque, rather than invisible.
  if (best.bpp === 32 && allAlphaZero(data)) for (let i = 3; i < data.length; i += 4) data[i] = 255;
  return { kind: "raw", data, width: best.width, height: best.height, alpha: true };
}

/**
 * The size an entry declares in its own header: PNG's IHDR, or the DIB header (whose height counts the AND mask twice).
 */
function entryPixels(bytes: Buffer, offset: number): [number, number] {
  if (bytes.subarray(offset, offset + 8).equals(PNG_MAGIC)) {
    if (offset + 24 > bytes.length) throw new ImageRefusal("warn-image-undecodable", "icon PNG entry is truncated");
    return [bytes.readUInt32BE(offset + 16), bytes.readUInt32BE(offset + 20)];
  }
  return [bytes.readUInt32LE(offset + 4), Math.floor(bytes.readUInt32LE(offset + 8) / 2)];
}

function allAlphaZero(rgba: Buffer): boolean {
  for (let i = 3; i < rgba.length; i += 4) if (rgba[i] !== 0) return false;
  return true;
}
