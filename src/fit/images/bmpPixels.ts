/**
 * A BMP's pixels as RGBA, from its bytes: the decoder run in the BMP worker (see `bmp.ts`).
 *
 * Self-contained on purpose — no imports, no names from outside its body — because the worker is
 * given its source text (`decodeBmpPixels.toString()`), the same from the sources and the package.
 *
 * Read: the OS/2 core header (12 bytes) and BITMAPINFOHEADER with its V2–V5 extensions; 1-, 4- and
 * 8-bit palettes (3- or 4-byte entries, `biClrUsed` of them); 16- and 32-bit BI_RGB (5-5-5, 8-8-8,
 * no alpha: writers leave that byte 0) and BI_BITFIELDS / BI_ALPHABITFIELDS masks (each channel
 * scaled to 0–255 by its mask's largest value); 24-bit; bottom-up and top-down; run-length
 * encoded 8- and 4-bit palettes (BI_RLE8, BI_RLE4: pixels its codes skip, by a delta or a line or
 * bitmap ended early, are transparent, as browsers draw them); the pixel data where `bfOffBits`
 * says. Anything else (JPEG or PNG inside, other depths, data shorter than the size declared) is
 * refused with the reason: never guessed into wrong pixels.
 */

export interface BmpPixels {
  readonly width: number;
  readonly height: number;
  /** RGBA, rows top to bottom. */
  readonly data: Uint8Array;
  /** Whether the bitmap carries alpha (16/32-bit with an alpha mask); else every alpha byte is 255. */
  readonly alpha: boolean;
}

export function decodeBmpPixels(bytes: Uint8Array): BmpPixels | { readonly error: string } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fail = (error: string) => ({ error });
  if (bytes.length < 26 || bytes[0] !== 0x42 || bytes[1] !== 0x4d) return fail("not a BMP (no BM signature)");
  const dataOffset = view.getUint32(10, true);
  const headerSize = view.getUint32(14, true);
  const core = headerSize === 12;
  if (!core && headerSize < 40) return fail(`BMP header of ${headerSize} bytes is not one of the known headers`);
  if (14 + headerSize > bytes.length) return fail("BMP shorter than its header");
  const width = core ? view.getUint16(18, true) : view.getInt32(18, true);
  const signedHeight = core ? view.getUint16(20, true) : view.getInt32(22, true);
  const bits = core ? view.getUint16(24, true) : view.getUint16(28, true);
  const compression = core ? 0 : view.getUint32(30, true);
  const topDown = signedHeight < 0;
  const height = Math.abs(signedHeight);
  if (width <= 0 || height <= 0) return fail("BMP declares no pixels");
  if (![1, 4, 8, 16, 24, 32].includes(bits)) return fail(`BMP of ${bits} bits a pixel is not decoded`);
  const masked = compression === 3 || compression === 6;
  const runLength = (compression === 1 && bits === 8) || (compression === 2 && bits === 4);
  if (compression !== 0 && !runLength && !(masked && (bits === 16 || bits === 32))) {
    const names: Record<number, string> = { 1: "BI_RLE8", 2: "BI_RLE4", 3: "BI_BITFIELDS", 4: "BI_JPEG", 5: "BI_PNG" };
    const name = names[compression] ?? `compression ${compression}`;
    return fail(`BMP with ${name} at ${bits} bits a pixel is not decoded`);
  }

  // Masks: BI_RGB's fixed layouts, or those the header (V2 and later) or the 12 bytes after a
  // 40-byte header hold; alpha only from a mask given with BI_BITFIELDS / BI_ALPHABITFIELDS.
  let masks = bits === 16 ? [0x7c00, 0x03e0, 0x001f, 0] : [0xff0000, 0x00ff00, 0x0000ff, 0];
  if (masked) {
    const at = 14 + 40;
    const withAlpha = compression === 6 || headerSize >= 56;
    if (at + (withAlpha ? 16 : 12) > bytes.length) return fail("BMP shorter than its colour masks");
    masks = [
      view.getUint32(at, true),
      view.getUint32(at + 4, true),
      view.getUint32(at + 8, true),
      withAlpha ? view.getUint32(at + 12, true) : 0,
    ];
  }
  const channels = masks.map((mask) => {
    let shift = 0;
    while (mask !== 0 && ((mask >>> shift) & 1) === 0) shift++;
    return { mask: mask >>> 0, shift, max: mask === 0 ? 0 : (mask >>> 0) >>> shift };
  });
  let alpha = channels[3]!.max !== 0;

  // The pixel data cannot start inside the headers, the masks, or before a palette's first entry.
  const tablesAt = 14 + headerSize + (masked && headerSize === 40 ? (compression === 6 ? 16 : 12) : 0);
  if (dataOffset < tablesAt + (bits <= 8 ? (core ? 3 : 4) : 0))
    return fail(`BMP pixel data offset ${dataOffset} points into its headers`);
  let palette: Uint8Array | undefined;
  if (bits <= 8) {
    const entrySize = core ? 3 : 4;
    const declared = core ? 0 : view.getUint32(46, true);
    const entries = declared === 0 || declared > 2 ** bits ? 2 ** bits : declared;
    const at = 14 + headerSize + (masked ? 12 : 0);
    // A palette may be cut short by the pixel data: what is there is read, the rest is black.
    const available = Math.max(0, Math.min(entries, Math.floor((Math.min(dataOffset, bytes.length) - at) / entrySize)));
    palette = new Uint8Array(2 ** bits * 4);
    for (let i = 0; i < available; i++) {
      const p = at + i * entrySize;
      palette[i * 4] = bytes[p + 2]!;
      palette[i * 4 + 1] = bytes[p + 1]!;
      palette[i * 4 + 2] = bytes[p]!;
      palette[i * 4 + 3] = 255;
    }
    for (let i = available; i < 2 ** bits; i++) palette[i * 4 + 3] = 255;
  }

  if (runLength && palette !== undefined) return decodeRunLength(palette);
  const stride = Math.floor((bits * width + 31) / 32) * 4;
  if (dataOffset + stride * height > bytes.length)
    return fail(`BMP pixel data is shorter than its ${width}×${height} pixels`);
  const data = new Uint8Array(width * height * 4);
  const scale = (value: number, channel: { max: number }) =>
    channel.max === 255 ? value : channel.max === 0 ? 0 : Math.round((value * 255) / channel.max);
  for (let y = 0; y < height; y++) {
    const row = dataOffset + (topDown ? y : height - 1 - y) * stride;
    let out = y * width * 4;
    for (let x = 0; x < width; x++, out += 4) {
      if (palette !== undefined) {
        const bit = x * bits;
        const byte = bytes[row + (bit >> 3)]!;
        const index = bits === 8 ? byte : (byte >> (8 - bits - (bit & 7))) & (2 ** bits - 1);
        data[out] = palette[index * 4]!;
        data[out + 1] = palette[index * 4 + 1]!;
        data[out + 2] = palette[index * 4 + 2]!;
        data[out + 3] = 255;
      } else if (bits === 24) {
        const p = row + x * 3;
        data[out] = bytes[p + 2]!;
        data[out + 1] = bytes[p + 1]!;
        data[out + 2] = bytes[p]!;
        data[out + 3] = 255;
      } else {
        const pixel = bits === 16 ? view.getUint16(row + x * 2, true) : view.getUint32(row + x * 4, true);
        for (let c = 0; c < 3; c++) {
          const channel = channels[c]!;
          data[out + c] = scale((pixel & channel.mask) >>> channel.shift, channel);
        }
        const a = channels[3]!;
        data[out + 3] = alpha ? scale((pixel & a.mask) >>> a.shift, a) : 255;
      }
    }
  }
  // Alpha bytes all 0 under an alpha mask: written by a program that never set them (a clipboard
  // dump, say), as browsers read it — opaque, not an invisible image.
  if (alpha) {
    let seen = false;
    for (let i = 3; i < data.length && !seen; i += 4) seen = data[i] !== 0;
    if (!seen) {
      for (let i = 3; i < data.length; i += 4) data[i] = 255;
      alpha = false;
    }
  }
  return { width, height, data, alpha };

  /**
   * BI_RLE8 / BI_RLE4: runs of one index (two alternating ones at 4 bits), or after a 0 byte: 0
   * ends the line, 1 the bitmap, 2 moves right and up the rows by the next two bytes, 3–255 that
   * many indexes as they are (padded to 2 bytes). As Chromium draws them: a run past the line's
   * end is cut there; indexes as they are, or a move, past the line's end stop the decoding, as
   * data ending before the end-of-bitmap code does — what is not drawn is transparent. The work
   * is bounded by the pixels and the bytes, never by the counts written in the data.
   */
  function decodeRunLength(colours: Uint8Array): BmpPixels | { readonly error: string } {
    let out: Uint8Array;
    try {
      out = new Uint8Array(width * height * 4);
    } catch {
      return fail(`BMP of ${width}×${height} pixels is too large to decode`);
    }
    let written = 0;
    let x = 0;
    let y = 0;
    const put = (index: number): void => {
      const at = ((topDown ? y : height - 1 - y) * width + x) * 4;
      out[at] = colours[index * 4]!;
      out[at + 1] = colours[index * 4 + 1]!;
      out[at + 2] = colours[index * 4 + 2]!;
      out[at + 3] = 255;
      written++;
      x++;
    };
    let p = dataOffset;
    while (p + 1 < bytes.length && y < height) {
      const count = bytes[p]!;
      const value = bytes[p + 1]!;
      p += 2;
      if (count > 0) {
        const end = Math.min(x + count, width);
        for (let i = 0; x < end; i++) put(bits === 8 ? value : i % 2 === 0 ? value >> 4 : value & 15);
      } else if (value === 0) {
        x = 0;
        y++;
      } else if (value === 1) {
        break;
      } else if (value === 2) {
        if (p + 1 >= bytes.length) break;
        x += bytes[p]!;
        y += bytes[p + 1]!;
        p += 2;
        if (x > width) break;
      } else {
        const size = bits === 8 ? value : Math.ceil(value / 2);
        if (p + size > bytes.length || x + value > width) break;
        for (let i = 0; i < value; i++)
          put(bits === 8 ? bytes[p + i]! : i % 2 === 0 ? bytes[p + (i >> 1)]! >> 4 : bytes[p + (i >> 1)]! & 15);
        p += size + (size % 2);
      }
    }
    return { width, height, data: out, alpha: written < width * height };
  }
}
