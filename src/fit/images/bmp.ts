/**
 * BMP, which libvips does not read: the header's size is checked against the pixel limit before
 * anything is allocated, then bmp-ts decodes to RGBA — in a worker thread, terminated when the fit
 * is given up. bmp-ts is JavaScript: on the proxy's thread, a run-length-encoded BMP of a few
 * bytes declaring the largest size allowed held every session while it filled a quarter of a
 * gigabyte of pixels. bmp-ts fills the alpha byte with 0 unless the file has an alpha mask, so
 * alpha is kept only for 16/32-bit bitmaps that declare one.
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
  const decoded = decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { toRGBA: true });
  const own = decoded.data.byteOffset === 0 && decoded.data.byteLength === decoded.data.buffer.byteLength;
  const view = new Uint8Array(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength);
  const data = own ? view : view.slice();
  const { width, height, bitPP } = decoded;
  parentPort.postMessage({ width, height, bitPP, maskAlpha: decoded.maskAlpha ?? 0, data }, [data.buffer]);
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
  const decoded = await decodeInWorker(bytes, signal);
  const expected = decoded.width * decoded.height * 4;
  if (decoded.data.length !== expected)
    throw new ImageRefusal("warn-image-undecodable", "BMP decoded to the wrong number of pixels");
  const alpha = (decoded.bitPP === 32 || decoded.bitPP === 16) && decoded.maskAlpha !== 0;
  const data = Buffer.from(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength);
  return { kind: "raw", data, width: decoded.width, height: decoded.height, alpha };
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
