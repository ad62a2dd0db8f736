/**
 * The file a command writes its report to (`-o`). Checked before the work starts — its missing
 * folders made one at a time (Node's recursive mkdir loops forever on /proc), the file opened
 * for appending and a zero-length write made — so an audit never reads a whole server only to
 * find it cannot write what it read. A write that fails later names the file and the OS error.
 */
import { writeFileSync } from "node:fs";
import { NormalizerError } from "../errors/NormalizerError.js";
import { ensureWritable, osReason } from "../observe/logFile.js";

export function prepareOutputFile(file: string, flag: string): void {
  try {
    ensureWritable(file);
  } catch (error) {
    throw unwritable(file, flag, error);
  }
}

export function writeOutputFile(file: string, text: string, flag: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    throw unwritable(file, flag, error);
  }
}

function unwritable(file: string, flag: string, error: unknown): NormalizerError {
  return new NormalizerError("OUTPUT_UNWRITABLE", `${flag}: cannot write ${file}: ${osReason(error)}`, { file });
}
