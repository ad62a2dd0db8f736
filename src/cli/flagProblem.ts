/**
 * node:util parseArgs's error messages, rewritten into one line that names the flag, says what
 * was expected and, for an unknown flag, the closest known one.
 */
import { didYouMean } from "../errors/didYouMean.js";

export function flagProblem(message: string, known: readonly string[]): string {
  const unknown = /^Unknown option '(-{1,2})([^'=]+)'/.exec(message);
  if (unknown !== undefined && unknown !== null) {
    const [, dashes, name] = unknown;
    const hint =
      dashes === "-" && name!.length === 1
        ? onlyFlagStarting(name!, known)
        : didYouMean(name!, known, (option) => `--${option}`);
    return `unknown option ${dashes}${name}${hint}`;
  }
  const ambiguous = /^Option '([^']+)' argument is ambiguous/.exec(message);
  if (ambiguous !== null) {
    const flag = ambiguous[1]!.split(" ")[0]!;
    return (
      `${flag} is followed by a word starting with '-', taken for a flag; write a value that starts with '-' as ` +
      `${flag}=-VALUE`
    );
  }
  const missing = /^Option '(?:-\w, )?(--[^ ']+) <value>' argument missing/.exec(message);
  if (missing !== null) return `${missing[1]} expects a value, got none`;
  const noValue = /^Option '(?:-\w, )?(--[^ ']+)' does not take an argument/.exec(message);
  if (noValue !== null) return `${noValue[1]} is a switch and takes no value`;
  return message.split("\n")[0]!.replace(/\. To specify.*$/, "");
}

/**
 * A one-letter flag (`-p`) is too short to be a slip of a long one: the long one it starts, when
 * only one does (`" (did you mean --port?)"`), else "".
 */
function onlyFlagStarting(letter: string, known: readonly string[]): string {
  const starting = known.filter((option) => option.startsWith(letter));
  return starting.length === 1 ? ` (did you mean --${starting[0]}?)` : "";
}
