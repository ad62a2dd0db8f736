/**
 * The BMP decoder against bitmaps written here byte by byte, per the format: every header kind,
 * depth and mask layout gives exactly the pixels written; what it does not read is refused.
 */
import { describe, expect, it } from "vitest";
import { decodeBmpPixels } from "../../src/fit/images/bmpPixels.js";

interface BmpSpec {
  /** 12 (OS/2 core), 40, 108 (V4) or 124 (V5). */
  header?: number;
  bits: number;
  compression?: number;
  /** r, g, b, a masks: in the header (V4/V5) or after a 40-byte one (BI_BITFIELDS). */
  masks?: readonly [number, number, number, number];
  /** Palette entries, RGB. */
  palette?: ReadonlyArray<readonly [number, number, number]>;
  topDown?: boolean;
  /** Bytes between the tables and the pixel data (bfOffBits says where it starts). */
  gap?: number;
  /** Pixel values, rows top to bottom: palette indexes, or the packed value for 16/32 bits, [r,g,b] for 24. */
  rows: ReadonlyArray<ReadonlyArray<number | readonly number[]>>;
}

function bmp(spec: BmpSpec): Uint8Array {
  const header = spec.header ?? 40;
  const core = header === 12;
  const height = spec.rows.length;
  const width = spec.rows[0]!.length;
  const masksAfter = header === 40 && spec.masks !== undefined ? (spec.compression === 6 ? 16 : 12) : 0;
  const paletteBytes = (spec.palette?.length ?? 0) * (core ? 3 : 4);
  const stride = Math.floor((spec.bits * width + 31) / 32) * 4;
  const offset = 14 + header + masksAfter + paletteBytes + (spec.gap ?? 0);
  const out = Buffer.alloc(offset + stride * height);
  out.write("BM", 0, "latin1");
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(offset, 10);
  out.writeUInt32LE(header, 14);
  if (core) {
    out.writeUInt16LE(width, 18);
    out.writeUInt16LE(height, 20);
    out.writeUInt16LE(1, 22);
    out.writeUInt16LE(spec.bits, 24);
  } else {
    out.writeInt32LE(width, 18);
    out.writeInt32LE(spec.topDown ? -height : height, 22);
    out.writeUInt16LE(1, 26);
    out.writeUInt16LE(spec.bits, 28);
    out.writeUInt32LE(spec.compression ?? 0, 30);
    out.writeUInt32LE(spec.palette?.length ?? 0, 46);
    // V4/V5 hold the masks in the header; after a 40-byte header they follow it.
    for (const [i, mask] of (spec.masks ?? []).entries()) out.writeUInt32LE(mask >>> 0, 54 + i * 4);
  }
  let at = 14 + header + masksAfter;
  for (const [r, g, b] of spec.palette ?? []) {
    out[at] = b;
    out[at + 1] = g;
    out[at + 2] = r;
    at += core ? 3 : 4;
  }
  spec.rows.forEach((row, y) => {
    const start = offset + (spec.topDown ? y : height - 1 - y) * stride;
    row.forEach((value, x) => {
      if (spec.bits === 24) {
        const [r, g, b] = value as number[];
        out[start + x * 3] = b!;
        out[start + x * 3 + 1] = g!;
        out[start + x * 3 + 2] = r!;
      } else if (spec.bits === 16) out.writeUInt16LE(value as number, start + x * 2);
      else if (spec.bits === 32) out.writeUInt32LE((value as number) >>> 0, start + x * 4);
      else out[start + ((x * spec.bits) >> 3)]! |= (value as number) << (8 - spec.bits - ((x * spec.bits) & 7));
    });
  });
  return out;
}

/** A bottom-up BI_RLE8 (8 bits) or BI_RLE4 (4 bits) bitmap of PALETTE whose pixel data is `codes`. */
function runLength(bits: 4 | 8, width: number, height: number, codes: ReadonlyArray<ArrayLike<number>>): Uint8Array {
  const header = Buffer.from(bmp({ bits, palette: PALETTE, rows: [[0]] }));
  const offset = header.readUInt32LE(10);
  const out = Buffer.concat([
    header.subarray(0, offset),
    ...codes.map((part) => (part instanceof Uint8Array ? part : Buffer.from(Array.from(part)))),
  ]);
  out.writeUInt32LE(out.length, 2);
  out.writeInt32LE(width, 18);
  out.writeInt32LE(height, 22);
  out.writeUInt32LE(bits === 8 ? 1 : 2, 30);
  return out;
}

/** The decoded pixels as [r, g, b, a] per pixel, rows top to bottom. */
function pixels(bytes: Uint8Array): number[][] {
  const decoded = decodeBmpPixels(bytes);
  if ("error" in decoded) throw new Error(decoded.error);
  return Array.from({ length: decoded.width * decoded.height }, (_, i) => [...decoded.data.subarray(i * 4, i * 4 + 4)]);
}

const RED = [255, 0, 0, 255];
const GREEN = [0, 255, 0, 255];
const BLUE = [0, 0, 255, 255];
const WHITE = [255, 255, 255, 255];
const PALETTE = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [255, 255, 255],
] as const;

describe("decodeBmpPixels", () => {
  it("palettes of 1, 4 and 8 bits, odd widths, bottom-up and top-down, fewer colours than the depth holds", () => {
    const cases = [
      {
        bits: 8,
        palette: PALETTE,
        rows: [
          [0, 1, 2],
          [3, 0, 1],
        ],
        expected: [RED, GREEN, BLUE, WHITE, RED, GREEN],
      },
      {
        bits: 4,
        palette: PALETTE,
        rows: [
          [0, 1, 2],
          [3, 2, 1],
        ],
        expected: [RED, GREEN, BLUE, WHITE, BLUE, GREEN],
      },
      { bits: 1, palette: PALETTE.slice(0, 2), rows: [[0, 1, 1, 0, 1]], expected: [RED, GREEN, GREEN, RED, GREEN] },
    ];
    for (const topDown of [false, true])
      for (const { expected, ...spec } of cases)
        expect(pixels(bmp({ ...spec, topDown })), `${spec.bits}-bit, top-down ${topDown}`).toEqual(expected);
  });

  it("the OS/2 core header: 3-byte palette entries and 16-bit sizes", () => {
    expect(
      pixels(
        bmp({
          header: 12,
          bits: 8,
          palette: PALETTE,
          rows: [
            [2, 1],
            [0, 3],
          ],
        }),
      ),
    ).toEqual([BLUE, GREEN, RED, WHITE]);
    expect(
      pixels(
        bmp({
          header: 12,
          bits: 24,
          rows: [
            [
              [1, 2, 3],
              [4, 5, 6],
            ],
          ],
        }),
      ),
    ).toEqual([
      [1, 2, 3, 255],
      [4, 5, 6, 255],
    ]);
  });

  it("24-bit rows padded to four bytes, with the pixel data where bfOffBits says (after a gap)", () => {
    const rows = [
      [
        [10, 20, 30],
        [40, 50, 60],
        [70, 80, 90],
      ],
      [
        [1, 2, 3],
        [4, 5, 6],
        [7, 8, 9],
      ],
    ];
    const expected = [
      [10, 20, 30, 255],
      [40, 50, 60, 255],
      [70, 80, 90, 255],
      [1, 2, 3, 255],
      [4, 5, 6, 255],
      [7, 8, 9, 255],
    ];
    expect(pixels(bmp({ bits: 24, rows }))).toEqual(expected);
    expect(pixels(bmp({ bits: 24, rows, gap: 8 }))).toEqual(expected);
    expect(pixels(bmp({ bits: 8, palette: PALETTE, rows: [[0, 1, 2]], gap: 4 }))).toEqual([RED, GREEN, BLUE]);
  });

  it("16 bits: 5-5-5 by default, 5-6-5 and 1-5-5-5 by masks, full intensity 255 and opaque alpha 255", () => {
    expect(pixels(bmp({ bits: 16, rows: [[0x7fff, 0x7c00, 0x001f]] }))).toEqual([WHITE, RED, BLUE]);
    const rgb565 = [0xf800, 0x07e0, 0x001f, 0] as const;
    expect(pixels(bmp({ bits: 16, compression: 3, masks: rgb565, rows: [[0xffff, 0x07e0, 0x0400]] }))).toEqual([
      WHITE,
      GREEN,
      [0, 130, 0, 255],
    ]);
    const argb1555 = [0x7c00, 0x03e0, 0x001f, 0x8000] as const;
    const decoded = decodeBmpPixels(
      bmp({ header: 124, bits: 16, compression: 3, masks: argb1555, rows: [[0xfc00, 0x001f]] }),
    );
    expect(decoded).toMatchObject({ alpha: true });
    expect(pixels(bmp({ header: 124, bits: 16, compression: 3, masks: argb1555, rows: [[0xfc00, 0x001f]] }))).toEqual([
      RED,
      [0, 0, 255, 0],
    ]);
  });

  it("32 bits: BI_RGB has no alpha (its fourth byte 0 or not, masks in a V4/V5 header or zero ignored); masks give alpha", () => {
    for (const header of [40, 108, 124])
      for (const masks of [undefined, [0, 0, 0, 0] as const, [0xff0000, 0xff00, 0xff, 0xff000000] as const]) {
        const decoded = decodeBmpPixels(bmp({ header, bits: 32, masks, rows: [[0x00ff0000, 0xff00ff00]] }));
        expect(decoded, `header ${header}, masks ${masks}`).toMatchObject({ alpha: false });
        expect(pixels(bmp({ header, bits: 32, masks, rows: [[0x00ff0000, 0xff00ff00]] }))).toEqual([RED, GREEN]);
      }
    const rgba = [0xff000000, 0x00ff0000, 0x0000ff00, 0x000000ff] as const;
    expect(
      pixels(bmp({ header: 108, bits: 32, compression: 3, masks: rgba, rows: [[0xff0000ff, 0x0000ff80]] })),
    ).toEqual([RED, [0, 0, 255, 128]]);
    // An alpha mask whose bytes were never set (all 0): opaque, as browsers read it, not invisible.
    const unset = decodeBmpPixels(bmp({ header: 124, bits: 32, compression: 3, masks: rgba, rows: [[0xff000000]] }));
    expect(unset).toMatchObject({ alpha: false });
    expect([...(unset as { data: Uint8Array }).data]).toEqual(RED);
    // BI_ALPHABITFIELDS after a 40-byte header.
    const argb = [0xff0000, 0xff00, 0xff, 0xff000000] as const;
    expect(pixels(bmp({ bits: 32, compression: 6, masks: argb, rows: [[0x80ff0000]] }))).toEqual([[255, 0, 0, 128]]);
  });

  it("run-length encoded 8-bit: runs, indexes as they are (padded), lines and the bitmap ended by their codes", () => {
    const decoded = pixels(
      runLength(8, 5, 3, [
        [3, 0, 1, 2, 1, 1, 0, 0], // bottom row: 3 × red, 1 × blue, 1 × green, end of line
        [0, 3, 2, 1, 3, 0], // 3 indexes as they are, padded to 2 bytes
        [1, 3, 1, 1, 0, 0],
        [5, 2, 0, 1], // top row: 5 × blue, end of bitmap
      ]),
    );
    expect(decoded).toEqual([
      ...[BLUE, BLUE, BLUE, BLUE, BLUE],
      ...[BLUE, GREEN, WHITE, WHITE, GREEN],
      ...[RED, RED, RED, BLUE, GREEN],
    ]);
  });

  it("run-length encoded 4-bit: runs alternate the two indexes of their byte, indexes as they are by halves", () => {
    const decoded = pixels(
      runLength(4, 5, 2, [
        [5, 0x01, 0, 0], // bottom: red, green, red, green, red
        [0, 5, 0x23, 0x10, 0x20, 0, 0, 1], // 5 indexes in 3 bytes, padded to 4: blue, white, green, red, blue
      ]),
    );
    expect(decoded).toEqual([...[BLUE, WHITE, GREEN, RED, BLUE], ...[RED, GREEN, RED, GREEN, RED]]);
  });

  it("run-length encoded: what its codes skip is transparent; runs past a line's end are cut there", () => {
    const clear = [0, 0, 0, 0];
    // Bottom up: red, a delta 2 right and 1 up, green, the line ended; 9 × white in a line of 4,
    // the line ended (the run does not go on into the next), blue, and the data ends early.
    const bytes = runLength(8, 4, 4, [[1, 0, 0, 2, 2, 1, 1, 1, 0, 0, 9, 3, 0, 0, 1, 2]]);
    expect(decodeBmpPixels(bytes)).toMatchObject({ alpha: true });
    expect(pixels(bytes)).toEqual([
      ...[BLUE, clear, clear, clear],
      ...[WHITE, WHITE, WHITE, WHITE],
      ...[clear, clear, clear, GREEN],
      ...[RED, clear, clear, clear],
    ]);
    // Every pixel drawn: opaque.
    expect(decodeBmpPixels(runLength(8, 2, 1, [[2, 3, 0, 1]]))).toMatchObject({ alpha: false });
  });

  it("run-length encoded: indexes as they are, or a move, past a line's end stop the decoding, as Chromium", () => {
    const clear = [0, 0, 0, 0];
    // Bottom row red, green; then 3 indexes as they are in a line of 2: nothing more is drawn.
    const absolute = runLength(8, 2, 2, [[1, 0, 1, 1, 0, 0, 0, 3, 2, 2, 2, 0, 0, 0, 2, 2, 0, 1]]);
    expect(pixels(absolute)).toEqual([clear, clear, RED, GREEN]);
    // A move 3 right in a line of 2 (2 is its end, allowed): nothing after it is drawn either.
    const moved = runLength(8, 2, 2, [[0, 2, 3, 0, 0, 0, 2, 2, 0, 1]]);
    expect(pixels(moved)).toEqual([clear, clear, clear, clear]);
    const toTheEnd = runLength(8, 2, 2, [[1, 0, 0, 2, 1, 0, 0, 0, 2, 2, 0, 1]]);
    expect(pixels(toTheEnd)).toEqual([BLUE, BLUE, RED, clear]);
  });

  it("run-length encoded: the work is bounded by the pixels, not the counts written (1 pixel, 32 MiB of runs)", () => {
    // Runs of 255 × white.
    const codes = new Uint8Array(32 * 1024 * 1024).fill(255);
    for (let i = 1; i < codes.length; i += 2) codes[i] = 3;
    const big = runLength(8, 1, 1, [codes]);
    const started = performance.now();
    expect(pixels(big)).toEqual([WHITE]);
    // Drawing every count (255 pixels a code, past the line's end) took seconds; skipping them, milliseconds.
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("refuses what it does not read, with the reason: run-length at the wrong depth, JPEG inside, other depths, short data", () => {
    const refusal = (bytes: Uint8Array) => (decodeBmpPixels(bytes) as { error?: string }).error;
    expect(refusal(bmp({ bits: 4, compression: 1, palette: PALETTE, rows: [[0]] }))).toContain("BI_RLE8 at 4 bits");
    expect(refusal(bmp({ bits: 8, compression: 2, palette: PALETTE, rows: [[0]] }))).toContain("BI_RLE4 at 8 bits");
    expect(refusal(bmp({ bits: 24, compression: 4, rows: [[[1, 2, 3]]] }))).toContain("BI_JPEG");
    expect(refusal(bmp({ bits: 24, compression: 99, rows: [[[1, 2, 3]]] }))).toContain("compression 99");
    const deep = bmp({ bits: 32, rows: [[0, 0]] });
    Buffer.from(deep.buffer, deep.byteOffset).writeUInt16LE(64, 28);
    expect(refusal(deep)).toContain("64 bits a pixel");
    expect(refusal(bmp({ bits: 24, rows: [[[1, 2, 3]]] }).subarray(0, 57))).toContain("shorter");
    expect(refusal(new TextEncoder().encode("not a bitmap at all, but long enough"))).toContain("no BM signature");
    // Pixel data said to start inside the headers or the palette: header bytes are no pixels.
    for (const [bits, offset] of [
      [24, 0],
      [8, 20],
      [8, 54],
    ] as const) {
      const spec = bits === 24 ? { bits, rows: [[[1, 2, 3]]] } : { bits, palette: PALETTE, rows: [[0]] };
      const bytes = Buffer.from(bmp(spec));
      bytes.writeUInt32LE(offset, 10);
      expect(refusal(bytes), `${bits}-bit at ${offset}`).toContain("points into its headers");
    }
  });
});
