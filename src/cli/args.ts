/**
 * Command-line parsing shared by the commands: flags via node:util parseArgs, everything after
 * `--` is an upstream command line (never interpreted by a shell).
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { NormalizerError } from "../errors/NormalizerError.js";

export interface ParsedArgs<V> {
  readonly values: V;
  readonly positionals: string[];
  /** Words after `--`: the upstream command and its arguments. */
  readonly command: string[];
}

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;
type ParsedValues<T extends OptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>["values"];

export function parseCommandArgs<T extends OptionsConfig>(
  argv: readonly string[],
  options: T,
  commandName: string,
): { values: ParsedValues<T>; positionals: string[]; command: string[] } {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? [...argv] : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  try {
    const { values, positionals } = parseArgs({ args: own, options, allowPositionals: true, strict: true });
    return { values, positionals, command };
  } catch (error) {
    throw new NormalizerError(
      "USAGE",
      `${commandName}: ${(error as Error).message.replace(/\. To specify.*$/s, "")} (see mcp-normalizer ${commandName} --help)`,
    );
  }
}

/** `--header "Name: value"` flags as a record. */
export function parseHeaderFlags(
  flags: readonly string[] | undefined,
  commandName: string,
): Record<string, string> | undefined {
  if (flags === undefined || flags.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const flag of flags) {
    const colon = flag.indexOf(":");
    if (colon <= 0)
      throw new NormalizerError("USAGE", `${commandName}: --header expects "Name: value", got ${JSON.stringify(flag)}`);
    out[flag.slice(0, colon).trim()] = flag.slice(colon + 1).trim();
  }
  return out;
}

export function parseIntFlag(value: string | undefined, flag: string, commandName: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new NormalizerError("USAGE", `${commandName}: ${flag} expects a whole number, got ${JSON.stringify(value)}`);
  return n;
}
