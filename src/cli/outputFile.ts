/**
 * The file a command writes its report to (`-o`). Checked before the work starts — its missing
 * folders made one at a time (Node's recursive mkdir loops forever on /proc) — so an audit never
 * reads a whole server only to find it cannot write what it read. The report is written whole to
 * a file beside it and then renamed over it, so a write that fails (a full disk) leaves the report
 * that was there as it was, not cut mid-row; the failure names the file and the OS error.
 */
import { randomBytes } from "node:crypto";
import {
  accessSync,
  chmodSync,
  constants,
  lstatSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { NormalizerError } from "../errors/NormalizerError.js";
import { osReason } from "../errors/osReason.js";
import { ensureWritable, makeFolders } from "../observe/logFile.js";
import { onShutdownSignal, signalExitCode } from "./signals.js";

/**
 * Checks `file` can be written without creating it: its missing folders are made, then an
 * existing file is opened for appending (nothing written), a new one's folder checked by making
 * and removing a file in it — so a run that fails later leaves no empty report behind. Returns what takes the
 * folders it made away again, for a command that fails before it writes.
 */
export function prepareOutputFile(file: string, flag: string): () => void {
  let made: string[] = [];
  try {
    const existing = statSync(file, { throwIfNoEntry: false });
    // A pipe or a device is only checked, not opened: opening a FIFO waits for its reader, and
    // closing it again would end that reader before the report comes.
    if (existing?.isDirectory()) throw Object.assign(new Error("EISDIR: a folder"), { code: "EISDIR" });
    if (existing !== undefined && !existing.isFile()) accessSync(file, constants.W_OK);
    else if (existing !== undefined) ensureWritable(file);
    else if (lstatSync(file, { throwIfNoEntry: false }) !== undefined) {
      // A link to nowhere: writing would follow it into a folder that is not there.
      throw Object.assign(new Error("ENOENT: a link to a file that does not exist"), { code: "ENOENT" });
    } else {
      const folder = dirname(file);
      made = makeFolders(folder);
      if (!statSync(folder).isDirectory()) throw new Error("ENOTDIR: not a directory");
      accessSync(folder, constants.W_OK | constants.X_OK);
      // access() allows what the folder may still refuse (/proc; read-only or network mounts seen
      // by root): a file is made beside the report's place and taken away again.
      const probe = join(folder, `.${basename(file)}.${randomBytes(6).toString("hex")}.probe`);
      writeFileSync(probe, "", { flag: "wx" });
      rmSync(probe, { force: true });
    }
  } catch (error) {
    // Folders made before the check failed go again, as for a command that fails later.
    removeFolders(made);
    throw unwritable(file, flag, error);
  }
  // What was made for a report that is then never written (the command failed) goes again.
  return () => removeFolders(made);
}

/**
 * `prepareOutputFile` for a command a signal may stop before its report is written (`-o` given or
 * not): SIGINT/SIGTERM are taken first, so a signal while the folders are made, or until `stop`,
 * removes what was made and exits as signalled. A command that ends on its own calls `stop`
 * (after it takes the signals over with a handler of its own, if it has one: a moment with none
 * would let a signal kill it with the folders left), and `unmake` when it writes no report.
 */
export function prepareOutputUnderSignals(
  file: string | undefined,
  flag: string,
): { readonly unmake: () => void; readonly stop: () => void } {
  let unmake = (): void => {};
  const stop = onShutdownSignal((signal) => {
    unmake();
    process.exit(signalExitCode(signal));
  });
  try {
    if (file !== undefined) unmake = prepareOutputFile(file, flag);
  } catch (error) {
    stop();
    throw error;
  }
  return { unmake: () => unmake(), stop };
}

/** Removes `made` (folders made one at a time, outermost first), innermost first; one not empty stays. */
function removeFolders(made: readonly string[]): void {
  for (const folder of [...made].reverse()) {
    try {
      rmdirSync(folder);
    } catch {
      // Not empty (something else was put there meanwhile): it stays.
    }
  }
}

/**
 * Writes the report: whole, then renamed over `file` (through a link, onto what it names; the
 * file's permissions kept). Written to as it is, as before: a device or a pipe (`-o /dev/stdout`),
 * a file a rename would change more than the contents of (another owner's or group's, one with
 * other hard links), and a file whose folder takes no new file or no rename (a sticky /tmp).
 */
export function writeOutputFile(file: string, text: string, flag: string): void {
  try {
    const existing = statSync(file, { throwIfNoEntry: false });
    // A new file would be ours, in our group: a rename would take the file from its owner or group.
    const ownedByOther =
      existing !== undefined &&
      process.getuid !== undefined &&
      (existing.uid !== process.getuid() || existing.gid !== process.getgid?.());
    const inPlace = existing !== undefined && (!existing.isFile() || existing.nlink > 1 || ownedByOther);
    if (inPlace || !renamedOver(existing === undefined ? file : realpathSync(file), text, existing))
      writeFileSync(file, text);
  } catch (error) {
    throw new NormalizerError("OUTPUT_WRITE_FAILED", `${flag}: cannot write ${file}: ${osReason(error)}`, { file });
  }
}

/**
 * `text` written whole beside `target` and renamed over it (its permissions kept); false, with
 * nothing left behind, when the folder takes no new file or no rename: the caller writes in place.
 */
function renamedOver(target: string, text: string, existing: Stats | undefined): boolean {
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, text, { flag: "wx" });
  } catch (error) {
    rmSync(temp, { force: true });
    if ((error as NodeJS.ErrnoException).code === "EACCES") return false;
    throw error;
  }
  try {
    if (existing !== undefined) chmodSync(temp, existing.mode & 0o7777);
    renameSync(temp, target);
    return true;
  } catch (error) {
    rmSync(temp, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EPERM" || code === "EACCES") return false;
    throw error;
  }
}

function unwritable(file: string, flag: string, error: unknown): NormalizerError {
  return new NormalizerError("OUTPUT_UNWRITABLE", `${flag}: cannot write ${file}: ${osReason(error)}`, { file });
}
