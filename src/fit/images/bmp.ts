/**
 * BMP, which libvips does not read: the header's size is checked against the pixel limit before
 * anything is allocated (a run-length-encoded BMP of a few bytes can declare any size), then
 * bmp-ts decodes to RGBA. bmp-ts fills the alpha byte with 0 unless the file has an alpha mask,
 * so alpha is kept only for 16/32-bit bitmaps that declare one.
 */
import { decode } from "bmp-ts";
import { ImageRefusal, refuseOverPixels, type RawPixels } from "./rawPixels.js";

/** BITMAPFILEHEADER (14 bytes) + the size field of the DIB header. */
const FILE_HEADER = 14;

export function decodeBmp(bytes: Buffer, maxPixels: number): RawPixels {
  if (bytes.length < FILE_HEADER + 16) throw new ImageRefusal("warn-image-undecodable", "BMP shorter than its headers");
  const dibSize = bytes.readUInt32LE(FILE_HEADER);
  // The OS/2 core header (12 bytes) stores 16-bit sizes; every later header 32-bit signed ones.
  const width = dibSize === 12 ? bytes.readUInt16LE(FILE_HEADER + 4) : Math.abs(bytes.readInt32LE(FILE_HEADER + 4));
  const height = dibSize === 12 ? bytes.readUInt16LE(FILE_HEADER + 6) : Math.abs(bytes.readInt32LE(FILE_HEADER + 8));
  if (width === 0 || height === 0) throw new ImageRefusal("warn-image-undecodable", "BMP declares no pixels");
  refuseOverPixels(width, height, maxPixels, "BMP");
  let decoded: ReturnType<typeof decode>;
  try {
    decoded = decode(bytes, { toRGBA: true });
  } catch (error) {
    throw new ImageRefusal(
      "warn-image-undecodable",
      `BMP does not decode: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const expected = decoded.width * decoded.height * 4;
  if (decoded.data.length !== expected)
    throw new ImageRefusal("warn-image-undecodable", "BMP decoded to the wrong number of pixels");
  const alphaMask = (decoded as unknown as { maskAlpha?: number }).maskAlpha ?? 0;
  const alpha = (decoded.bitPP === 32 || decoded.bitPP === 16) && alphaMask !== 0;
  return { kind: "raw", data: decoded.data, width: decoded.width, height: decoded.height, alpha };
}
