/**
 * BMP, which libvips does not read: the header's size is checked against the pixel limit before
 * anything is allocated, then bmp-ts decodes to RGBA — in a worker thread, terminated when the fit
 * is given up. bmp-ts is JavaScript: on the proxy's thread, a run-length-encoded BMP of a few
 * bytes declaring the largest size allowed held every session while it filled a quarter of a
 * gigabyte of pixels.
 *
 * bmp-ts (1.0.9) is asked for its own ABGR order: its RGBA option is ignored by the 4- and 8-bit
 * palette paths (red came out black) and garbles the 1-bit one; the worker reorders the bytes.
 * Its run-length paths (BI_RLE8, BI_RLE4) write pixels at the wrong offsets, and a 4-bit bitmap of
 * odd width stops after its first row: those are refused (forwarded as they came, with the reason).
 * It fills the alpha byte with 0 unless the file has an alpha mask, so alpha is kept only for
 * 16/32-bit bitmaps that declare one; the others' alpha bytes are made opaque in the worker
 * (sharp multiplies by alpha while it resizes, even when told to drop it: 0 came out black).
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { ImageRefusal, refuseOverPixels, type RawPixels } from "./rawPixels.js";

/** BITMAPFILEHEADER (14 bytes) + the size field of the DIB header. */
const FILE_HEADER = 14;

/** The worker: CommonJS given as source, so it runs the same from the sources and the package. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { decode } = require(workerData.module);
try {
  const bytes = workerData.bytes;
  const decoded = decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const own = decoded.data.byteOffset === 0 && decoded.data.byteLength === decoded.data.buffer.byteLength;
  const view = new Uint8Array(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength);
  const data = own ? view : view.slice();
  const { width, height, bitPP } = decoded;
  const maskAlpha = decoded.maskAlpha ?? 0;
  const opaque = !((bitPP === 32 || bitPP === 16) && maskAlpha !== 0);
  // A, B, G, R to R, G, B, A.
  for (let i = 0; i + 3 < data.length; i += 4) {
    const a = data[i], b = data[i + 1];
    data[i] = data[i + 3];
    data[i + 1] = data[i + 2];
    data[i + 2] = b;
    data[i + 3] = opaque ? 255 : a;
  }
  parentPort.postMessage({ width, height, bitPP, maskAlpha, data }, [data.buffer]);
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
`;

interface Decoded {
  readonly width: number;
  readonly height: number;
  readonly bitPP: number;
  readonly maskAlpha: number;
  readonly data: Uint8Array;
}

export async function decodeBmp(bytes: Buffer, maxPixels: number, signal?: AbortSignal): Promise<RawPixels> {
  if (bytes.length < FILE_HEADER + 16) throw new ImageRefusal("warn-image-undecodable", "BMP shorter than its headers");
  const dibSize = bytes.readUInt32LE(FILE_HEADER);
  // The OS/2 core header (12 bytes) stores 16-bit sizes; every later header 32-bit signed ones.
  const width = dibSize === 12 ? bytes.readUInt16LE(FILE_HEADER + 4) : Math.abs(bytes.readInt32LE(FILE_HEADER + 4));
  const height = dibSize === 12 ? bytes.readUInt16LE(FILE_HEADER + 6) : Math.abs(bytes.readInt32LE(FILE_HEADER + 8));
  if (width === 0 || height === 0) throw new ImageRefusal("warn-image-undecodable", "BMP declares no pixels");
  refuseOverPixels(width, height, maxPixels, "BMP");
  refuseMisdecoded(bytes, dibSize, width);
  const decoded = await decodeInWorker(bytes, signal);
  const expected = decoded.width * decoded.height * 4;
  if (decoded.data.length !== expected)
    throw new ImageRefusal("warn-image-undecodable", "BMP decoded to the wrong number of pixels");
  const alpha = (decoded.bitPP === 32 || decoded.bitPP === 16) && decoded.maskAlpha !== 0;
  const data = Buffer.from(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength);
  return { kind: "raw", data, width: decoded.width, height: decoded.height, alpha };
}

/** BI_RLE8 and BI_RLE4, in the DIB header's compression field (absent from the OS/2 core header). */
const RUN_LENGTH = new Map([
  [1, "BI_RLE8"],
  [2, "BI_RLE4"],
]);

/** Refuses the bitmaps bmp-ts would decode to wrong pixels (see the top of this file). */
function refuseMisdecoded(bytes: Buffer, dibSize: number, width: number): void {
  const bits = bytes.readUInt16LE(FILE_HEADER + (dibSize === 12 ? 10 : 14));
  const compression = dibSize === 12 ? 0 : bytes.readUInt32LE(FILE_HEADER + 16);
  const runLength = RUN_LENGTH.get(compression);
  if (runLength !== undefined)
    throw new ImageRefusal("warn-image-undecodable", `run-length encoded BMP (${runLength}) is not decoded`);
  if (bits === 4 && width % 2 === 1)
    throw new ImageRefusal("warn-image-undecodable", "4-bit BMP of odd width is not decoded");
}

function decodeInWorker(bytes: Buffer, signal: AbortSignal | undefined): Promise<Decoded> {
  const module = createRequire(import.meta.url).resolve("bmp-ts");
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, bytes } });
    const stop = (): void => void worker.terminate();
    const settle = (): void => {
      signal?.removeEventListener("abort", stop);
      void worker.terminate();
    };
    if (signal?.aborted) stop();
    else signal?.addEventListener("abort", stop, { once: true });
    worker.once("message", (message: Decoded | { error: string }) => {
      settle();
      if ("error" in message)
        reject(new ImageRefusal("warn-image-undecodable", `BMP does not decode: ${message.error}`));
      else resolve(message);
    });
    worker.once("error", (error) => {
      settle();
      reject(new ImageRefusal("warn-image-undecodable", `BMP does not decode: ${error.message}`));
    });
    worker.once("exit", () => {
      signal?.removeEventListener("abort", stop);
      reject(new ImageRefusal("warn-image-undecodable", "BMP decoding was stopped"));
    });
  });
}
