/**
 * Where the upstream's command line starts in the proxy's own arguments, in each of the forms
 * launchers can pass on:
 *   stdio [options] -- CMD ARGS…          the usual form
 *   stdio [options] CMD ARGS…             the first word that is not an option starts CMD (as
 *                                         `env` and `timeout` do): for launchers that drop a
 *                                         bare `--` (the MCP Inspector does)
 *   stdio [options] --command CMD [--arg A]…   flags only, for launchers that rewrite anything else
 * Everything from CMD on belongs to the upstream and is never read as the proxy's options.
 */
import { basename } from "node:path";
import { NormalizerError } from "../errors/NormalizerError.js";

interface OptionShape {
  readonly type: "string" | "boolean";
  readonly short?: string;
}

/** Splits `argv` into the proxy's own words and the upstream command (after `--`, or from the first operand on). */
export function splitAtUpstreamCommand(
  argv: readonly string[],
  options: Readonly<Record<string, OptionShape>>,
): { own: string[]; command: string[] } {
  const shorts = new Map(
    Object.entries(options).flatMap(([name, option]) =>
      option.short === undefined ? [] : [[option.short, name] as const],
    ),
  );
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") return { own: argv.slice(0, i), command: argv.slice(i + 1) };
    if (!word.startsWith("-") || word === "-") return { own: argv.slice(0, i), command: argv.slice(i) };
    if (word.includes("=")) continue;
    const name = word.startsWith("--") ? word.slice(2) : shorts.get(word.slice(1));
    // An option that takes a value takes the next word, whatever it looks like.
    if (name !== undefined && options[name]?.type === "string") i++;
  }
  return { own: [...argv], command: [] };
}

export interface CommandFlags {
  command?: string | undefined;
  arg?: string[] | undefined;
}

/** The upstream command from `--command`/`--arg`, or the words split off the command line; never both. */
export function upstreamCommandOf(values: CommandFlags, words: readonly string[], commandName: string): string[] {
  if (values.command === undefined) {
    if (values.arg !== undefined)
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --arg goes with --command CMD (the upstream's arguments, one per --arg)`,
      );
    // `serve proxy.config.json`: a config file, not a server to run.
    if (words.length === 1 && /\.json$/i.test(words[0]!))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: ${JSON.stringify(words[0])} looks like a config file, not a server's command: pass it as ` +
          `--config ${words[0]}`,
      );
    return [...words];
  }
  if (words.length > 0)
    throw new NormalizerError(
      "USAGE",
      `${commandName}: give the upstream either as --command ${JSON.stringify(values.command)} or as words ` +
        `(${JSON.stringify(words[0])} …), not both`,
    );
  if (values.command.trim() === "")
    throw new NormalizerError(
      "USAGE",
      `${commandName}: --command expects the upstream's executable, got an empty string`,
    );
  return [values.command, ...(values.arg ?? [])];
}

/** The name an upstream gets without `--name`: its executable's base name, or the URL's host. */
export function defaultUpstreamName(command: readonly string[], url: string | undefined): string {
  if (url !== undefined) {
    try {
      const host = new URL(url).hostname;
      if (host !== "") return host;
    } catch {
      // The URL is checked, and refused with its own message, where the upstream is built.
    }
    return "upstream";
  }
  const executable = command[0] === undefined ? "" : basename(command[0]).replace(/\.(exe|cmd|bat)$/i, "");
  return executable === "" || executable === "." || executable === ".." ? "upstream" : executable;
}
