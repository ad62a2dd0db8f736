/**
 * Command-line parsing shared by the commands: flags via node:util parseArgs, everything after
 * `--` is an upstream command line (never interpreted by a shell).
 */
import { isHeaderName, isHeaderValue, NOT_A_HEADER_NAME, NOT_A_HEADER_VALUE } from "../config/headerValue.js";
import { startsWithTilde, TILDE_NOT_EXPANDED } from "../config/homeTilde.js";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { NormalizerError } from "../errors/NormalizerError.js";
import { splitAtUpstreamCommand } from "./upstreamCommand.js";
import { flagProblem } from "./flagProblem.js";

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;
type ParsedValues<T extends OptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>["values"];

/**
 * `upstreamCommand`: the command names an upstream, which may also start at the first word that
 * is not an option (no `--`), see upstreamCommand.ts; then there are no positionals.
 * `filesAfterDash`: the command reads the files named after `--` too (they end the positionals,
 * and there is no command); a word taken for an unknown flag that looks like a file name (a dot
 * or a slash in it) is shown how to name it.
 */
export function parseCommandArgs<T extends OptionsConfig>(
  argv: readonly string[],
  options: T,
  commandName: string,
  shape: { upstreamCommand?: boolean; filesAfterDash?: boolean } = {},
): { values: ParsedValues<T>; positionals: string[]; command: string[] } {
  let own: string[];
  let command: string[];
  if (shape.upstreamCommand === true) {
    ({ own, command } = splitAtUpstreamCommand(
      argv,
      options as Record<string, { type: "string" | "boolean"; short?: string }>,
    ));
  } else {
    const dash = argv.indexOf("--");
    own = dash === -1 ? [...argv] : argv.slice(0, dash);
    command = dash === -1 ? [] : argv.slice(dash + 1);
  }
  let parsed: { values: ParsedValues<T>; positionals: string[] };
  try {
    parsed = parseArgs({ args: own, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = (error as Error).message;
    const file = shape.filesAfterDash === true ? fileTakenForFlag(message, own) : undefined;
    const fix =
      file === undefined
        ? `see mcp-normalizer ${commandName} --help`
        : `a file named so goes after --: mcp-normalizer ${commandName} -- ${file}`;
    throw new NormalizerError("USAGE", `${commandName}: ${flagProblem(message, Object.keys(options))} (${fix})`);
  }
  // Files after `--` are files too: an empty one is named as such, as before it.
  if (shape.filesAfterDash === true) {
    const positionals = [...parsed.positionals, ...command];
    refuseEmptyNames(parsed.values as Record<string, unknown>, positionals, commandName);
    return { values: parsed.values, positionals, command: [] };
  }
  refuseEmptyNames(parsed.values as Record<string, unknown>, parsed.positionals, commandName);
  return { ...parsed, command };
}

/** Flags that name a file, in every command that has them. */
const FILE_FLAGS: ReadonlySet<string> = new Set(["config", "log-file", "output"]);

/**
 * An empty file flag or word (what an unset shell variable gives: `--config "$CFG"`) is named as
 * such, not read as the current folder, and not taken for "no value" either.
 */
function refuseEmptyNames(values: Record<string, unknown>, positionals: readonly string[], commandName: string): void {
  for (const flag of FILE_FLAGS) {
    const value = values[flag];
    if (value === "")
      throw new NormalizerError("USAGE", `${commandName}: --${flag} expects a file name, got "" (an unset variable?)`);
    if (typeof value === "string" && startsWithTilde(value))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --${flag} ${value}: ${TILDE_NOT_EXPANDED} (no shell read the command line): give the ` +
          "full path",
      );
  }
  const at = positionals.indexOf("");
  if (at !== -1)
    throw new NormalizerError("USAGE", `${commandName}: argument ${at + 1} is empty ("": an unset variable?)`);
}

/**
 * The word parseArgs refused as an unknown flag, when it reads as a file name (`-dash.jsonl`); a
 * flag with a value (`--outfile=a.md`) is a flag, whatever its value holds.
 */
function fileTakenForFlag(message: string, words: readonly string[]): string | undefined {
  const flag = /^Unknown option '(-{1,2}[^'=]+)'/.exec(message)?.[1];
  if (flag === undefined) return undefined;
  const word = words.find((w) => w.startsWith(flag));
  return word !== undefined && !word.includes("=") && /[./]/.test(word) ? word : undefined;
}

/** `--header "Name: value"` flags as a record. */
export function parseHeaderFlags(
  flags: readonly string[] | undefined,
  commandName: string,
): Record<string, string> | undefined {
  if (flags === undefined || flags.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const [index, flag] of flags.entries()) {
    // A malformed flag is not quoted either: "Authorization Bearer sk-…" (the colon forgotten) is a credential.
    const which = `${commandName}: --header #${index + 1} of ${flags.length}`;
    const colon = flag.indexOf(":");
    if (colon <= 0)
      throw new NormalizerError("USAGE", `${which} expects "Name: value" and has no name and colon (not shown)`);
    const name = flag.slice(0, colon).trim();
    const value = flag.slice(colon + 1).trim();
    if (!isHeaderName(name)) throw new NormalizerError("USAGE", `${which}: its name (not shown) ${NOT_A_HEADER_NAME}`);
    // Never quoted: it is a credential more often than not.
    if (!isHeaderValue(value))
      throw new NormalizerError("USAGE", `${commandName}: --header ${JSON.stringify(name)} ${NOT_A_HEADER_VALUE}`);
    out[name] = value;
  }
  return out;
}

export function parseIntFlag(value: string | undefined, flag: string, commandName: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n))
    throw new NormalizerError("USAGE", `${commandName}: ${flag} expects a whole number, got ${JSON.stringify(value)}`);
  return n;
}

/** `--port P`: 0 (any free port) to 65535. */
export function parsePortFlag(value: string | undefined, commandName: string): number | undefined {
  const port = parseIntFlag(value, "--port", commandName);
  if (port !== undefined && port > 65535)
    throw new NormalizerError(
      "USAGE",
      `${commandName}: --port expects a port number from 0 to 65535 (0 = any free port), got ${value}`,
    );
  return port;
}
