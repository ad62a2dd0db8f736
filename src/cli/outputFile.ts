/**
 * The file a command writes its report to (`-o`). Checked before the work starts — its missing
 * folders made one at a time (Node's recursive mkdir loops forever on /proc) — so an audit never
 * reads a whole server only to find it cannot write what it read. A write that fails later names
 * the file and the OS error.
 */
import { accessSync, constants, existsSync, lstatSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { NormalizerError } from "../errors/NormalizerError.js";
import { ensureWritable, makeFolders, osReason } from "../observe/logFile.js";

/**
 * Checks `file` can be written without creating it: its missing folders are made, then an
 * existing file is opened for appending (nothing written), a new one's folder checked for write
 * access — so a run that fails later leaves no empty report behind.
 */
export function prepareOutputFile(file: string, flag: string): void {
  try {
    if (existsSync(file)) ensureWritable(file);
    else if (lstatSync(file, { throwIfNoEntry: false }) !== undefined) {
      // A link to nowhere: writing would follow it into a folder that is not there.
      throw Object.assign(new Error("ENOENT: a link to a file that does not exist"), { code: "ENOENT" });
    } else {
      const folder = dirname(file);
      makeFolders(folder);
      if (!statSync(folder).isDirectory()) throw new Error("ENOTDIR: not a directory");
      accessSync(folder, constants.W_OK | constants.X_OK);
    }
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
