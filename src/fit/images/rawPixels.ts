/** Pixels decoded outside sharp (BMP, icons), handed to sharp as raw RGBA. */
export interface RawPixels {
  readonly kind: "raw";
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
  /** False when the format carries no alpha: the fourth channel is opaque (255), and dropped. */
  readonly alpha: boolean;
}

/** Bytes for sharp to decode itself (an icon's PNG entry). */
export interface EncodedImage {
  readonly kind: "encoded";
  readonly bytes: Buffer;
}

/** Why an image is not decoded; becomes the warning record's action and reason. */
export class ImageRefusal extends Error {
  constructor(
    readonly action: "warn-image-undecodable" | "warn-image-too-many-pixels",
    reason: string,
  ) {
    super(reason);
  }
}

export function refuseOverPixels(width: number, height: number, maxPixels: number, what: string): void {
  if (width * height > maxPixels) {
    throw new ImageRefusal(
      "warn-image-too-many-pixels",
      `${what} declares ${width}×${height} pixels, over limits.imageMaxPixels (${maxPixels}); not decoded`,
    );
  }
}
