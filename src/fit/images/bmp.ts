/**
 * BMP, which libvips does not read: the header's size is checked against the pixel limit before
 * anything is allocated, then the pixels are decoded (`bmpPixels.ts`) in a worker thread,
 * terminated when the fit is given up. The decoder is JavaScript: on the proxy's thread, a BMP
 * of a few bytes declaring the largest size allowed held every session while it filled a quarter
 * of a gigabyte of pixels. What it does not read is refused with the reason, and the image goes
 * on as it came.
 */
import { Worker } from "node:worker_threads";
import { type BmpPixels, decodeBmpPixels } from "./bmpPixels.js";
import { ImageRefusal, refuseOverPixels, type RawPixels } from "./rawPixels.js";

/** BITMAPFILEHEADER (14 bytes) + the size field of the DIB header. */
const FILE_HEADER = 14;

/** The worker: the decoder's own source, as CommonJS, so it runs the same from the sources and the package. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
${decodeBmpPixels.toString()}
try {
  const decoded = decodeBmpPixels(workerData.bytes);
  if ("error" in decoded) parentPort.postMessage({ error: decoded.error });
  else parentPort.postMessage(decoded, [decoded.data.buffer]);
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
`;

export async function decodeBmp(bytes: Buffer, maxPixels: number, signal?: AbortSignal): Promise<RawPixels> {
  if (bytes.length < FILE_HEADER + 16) throw new ImageRefusal("warn-image-undecodable", "BMP shorter than its headers");
  const dibSize = bytes.readUInt32LE(FILE_HEADER);
  // The OS/2 core header (12 bytes) stores 16-bit sizes; every later header 32-bit signed ones.
  const width = dibSize === 12 ? bytes.readUInt16LE(FILE_HEADER + 4) : Math.abs(bytes.readInt32LE(FILE_HEADER + 4));
  const height = dibSize === 12 ? bytes.readUInt16LE(FILE_HEADER + 6) : Math.abs(bytes.readInt32LE(FILE_HEADER + 8));
  if (width === 0 || height === 0) throw new ImageRefusal("warn-image-undecodable", "BMP declares no pixels");
  refuseOverPixels(width, height, maxPixels, "BMP");
  const decoded = await decodeInWorker(bytes, signal);
  if (decoded.data.length !== decoded.width * decoded.height * 4)
    throw new ImageRefusal("warn-image-undecodable", "BMP decoded to the wrong number of pixels");
  const data = Buffer.from(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength);
  return { kind: "raw", data, width: decoded.width, height: decoded.height, alpha: decoded.alpha };
}

function decodeInWorker(bytes: Buffer, signal: AbortSignal | undefined): Promise<BmpPixels> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bytes } });
    const stop = (): void => void worker.terminate();
    const settle = (): void => {
      signal?.removeEventListener("abort", stop);
      void worker.terminate();
    };
    if (signal?.aborted) stop();
    else signal?.addEventListener("abort", stop, { once: true });
    worker.once("message", (message: BmpPixels | { error: string }) => {
      settle();
      if ("error" in message) reject(new ImageRefusal("warn-image-undecodable", message.error));
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
