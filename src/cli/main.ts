/**
 * The command dispatcher. This is the only place that decides exit codes; `src/cli.ts` is
 * the only place that exits (src/cli/ owns the process's lifetime; nothing below it exits).
 */
import { NormalizerError } from "../errors/NormalizerError.js";
import { visible } from "../errors/visible.js";
import { EXIT, type ExitCode } from "./exitCodes.js";
import { writeFully, type CliIo } from "./io.js";

export const MAIN_HELP = `mcp-normalizer — an MCP proxy that normalizes resource contents and accounts for every byte

Usage: mcp-normalizer <command> [options]

Commands:
  serve [--config proxy.config.json]       HTTP listener fronting every server in the config
  serve [--name NAME] [--port P] -- CMD ARGS  … or one upstream, without a config file (sidecar)
  stdio [--name NAME] -- CMD ARGS…          MCP over stdin/stdout, one upstream (desktop hosts);
                                            also CMD ARGS… without "--", or --command CMD --arg A…
  stdio --url URL [--transport T]           … an HTTP / SSE / WebSocket upstream
  stdio --config FILE --server NAME         … a server from a config file
  stdio --url URL --auth oauth              … a remote server that requires OAuth
  login NAME [--config FILE] [--no-browser] OAuth browser login for a remote server; stores its tokens
  audit  (same upstream selectors)          read every resource, report what normalization saves
         [--format md|json|html] [-o FILE] [--tokens] [--call TOOL --args JSON]
  report LOG.jsonl… [--format md|json|html] [-o FILE]
                                            aggregate normalization logs (files, globs, -, .gz)
  normalize [FILE|-]                        one JSON result or message in, normalized JSON out

Run "mcp-normalizer <command> --help" for a command's options.

Exit codes: 0 done; 1 runtime failure (upstream or listener); 2 bad command line or input;
3 invalid config; 130/143 audit, report or normalize stopped by SIGINT/SIGTERM.`;

type Command = (argv: readonly string[], io: CliIo) => Promise<ExitCode>;

/**
 * Each command's module, loaded when that command runs: `--help`, `--version` and a mistyped
 * command load none of them, and a command loads only what it uses (the HTTP listener, the
 * OAuth client, zod schemas and metrics are not on the path of a desktop host starting `stdio`).
 */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  normalize: async () => (await import("./commands/normalize.js")).runNormalize,
  stdio: async () => (await import("./commands/stdio.js")).runStdio,
  serve: async () => (await import("./commands/serve.js")).runServe,
  audit: async () => (await import("./commands/audit.js")).runAuditCommand,
  report: async () => (await import("./commands/report.js")).runReport,
  login: async () => (await import("./commands/login.js")).runLogin,
};

export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  try {
    return await run(argv, io);
  } catch (error) {
    // What the commands' own catch does not see: the general help or version that could not be written.
    return reportError(error, io, false, false);
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  // `help COMMAND` is `COMMAND --help` (an unknown COMMAND is named as one, not answered with the
  // help); `help --help` and `help help` are `help`.
  if (argv[0] === "help" && argv.length === 2 && !["--help", "-h", "help"].includes(argv[1]!)) {
    if (Object.hasOwn(COMMANDS, argv[1]!)) return run([argv[1]!, "--help"], io);
    return unknownCommand(argv[1]!, io);
  }
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    await writeFully(name === undefined ? io.stderr : io.stdout, `${MAIN_HELP}\n`);
    return name === undefined ? EXIT.USAGE : EXIT.OK;
  }
  if (name === "--version" || name === "-v") {
    await writeFully(io.stdout, `${await version()}\n`);
    return EXIT.OK;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (load === undefined) return unknownCommand(name, io);
  try {
    const command = await load();
    return await command(rest, io);
  } catch (error) {
    const logs = LOGGING_COMMANDS.has(name);
    return reportError(error, io, logs && wantsDebug(rest), logs);
  }
}

/** A command that is none of ours: named, with the nearest one, and exit 2. */
async function unknownCommand(name: string, io: CliIo): Promise<ExitCode> {
  const names = Object.keys(COMMANDS);
  const { didYouMean } = await import("../errors/didYouMean.js");
  const slip = didYouMean(name, [...names, "--help", "--version"], (known) => known);
  await writeFully(
    io.stderr,
    `mcp-normalizer: unknown command ${JSON.stringify(name)}${slip}; commands: ${names.join(", ")} (see --help)\n`,
  );
  return EXIT.USAGE;
}

/** Commands that take `--log-level` (the others refuse it: an internal error of theirs names no flag to try). */
const LOGGING_COMMANDS: ReadonlySet<string> = new Set(["stdio", "serve", "audit"]);

/** `--log-level debug` anywhere on the command line: errors then come with their stack. */
function wantsDebug(argv: readonly string[]): boolean {
  return argv.some((word, i) => word === "--log-level=debug" || (word === "--log-level" && argv[i + 1] === "debug"));
}

/**
 * One or two lines on stderr, and the exit code: 3 for the config, 2 for the command line or
 * input, 1 for the rest. A stack only with `--log-level debug`: a user's mistake never shows one.
 */
export async function reportError(error: unknown, io: CliIo, debug = false, takesLogLevel = true): Promise<ExitCode> {
  const stack = debug && error instanceof Error && error.stack !== undefined ? `\n${error.stack}` : "";
  if (error instanceof NormalizerError) {
    await writeFully(io.stderr, `mcp-normalizer: ${shown(error.message)}${stack}\n`);
    if (error.code.startsWith("CONFIG_")) return EXIT.CONFIG;
    if (
      error.code === "USAGE" ||
      error.code.startsWith("INPUT_") ||
      error.code === "INSECURE_BIND" ||
      error.code === "LOG_FILE_UNWRITABLE" ||
      error.code === "OUTPUT_UNWRITABLE"
    )
      return EXIT.USAGE;
    return EXIT.FAILURE;
  }
  // zod is loaded only here, on this error path: `--help` and the stdio path need not load it.
  const { ZodError } = await import("zod");
  if (error instanceof ZodError) {
    // A value built from flags that the config schema refused: name what and where.
    const lines = error.issues
      .slice(0, 2)
      .map((issue) => `${issue.path.map(String).join(".") || "value"}: ${issue.message}`);
    await writeFully(io.stderr, `mcp-normalizer: invalid command line: ${lines.join("; ")}${stack}\n`);
    return EXIT.USAGE;
  }
  const text = shown(error instanceof Error ? error.message : String(error));
  const where = stack !== "" ? stack : takesLogLevel ? " (--log-level debug shows where)" : "";
  await writeFully(io.stderr, `mcp-normalizer: internal error: ${text}${where}\n`);
  return EXIT.FAILURE;
}

/**
 * A message for the terminal: its lines kept, but no control character or escape sequence a
 * server put in it (an OAuth `error_description`, say) reaches the terminal as one.
 */
function shown(message: string): string {
  return message.split("\n").map(visible).join("\n");
}

async function version(): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}
