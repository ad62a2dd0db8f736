/**
 * `stdio -- CMD ARGS…`: the upstream is spawned before the proxy loads the rest of itself, so a
 * desktop host waits for the slower of the two starts, not for both in a row. The upstream
 * transport takes the child over when it would spawn the same command line (see
 * transports/upstream/earlyChild.ts); anything unusual on the command line (a config, a URL,
 * help, a flag this does not know) skips the shortcut and the command runs as it always did.
 *
 * A command line the command would refuse never starts the upstream: flag values are checked
 * here as the command checks them (a log file is opened for appending, as it will be), and
 * anything in doubt leaves the start to the command.
 *
 * The shutdown signals (and SIGHUP) are taken at the same moment: from then on a SIGTERM must
 * end the child too, which Node's default action (killing this process) would not.
 */
import { resolve } from "node:path";
import { startsWithTilde } from "../config/homeTilde.js";
import { prepareLogFile } from "../observe/logFile.js";
import { spawnEarly } from "../transports/upstream/earlyChild.js";
import { shutdownSignals, type ShutdownSignals } from "./signals.js";

/** `stdio` flags that say nothing about the upstream, and the values the command accepts (undefined: any). */
const WITH_VALUE = new Map<string, ReadonlySet<string> | ((value: string) => boolean) | undefined>([
  ["--log-level", new Set(["debug", "info", "warn", "error", "silent"])],
  ["--charset", new Set(["transcode", "preserve"])],
  // Not "~…": the command refuses it (no shell expanded it), so nothing is made or started for it here.
  ["--log-file", (value) => value !== "" && !startsWithTilde(value)],
  // A plain server name only: anything the config would have to check leaves the start to the command.
  ["--name", (value) => /^[A-Za-z0-9._-]+$/.test(value)],
]);
const ALONE = new Set(["--dry-run", "--no-browser"]);

let signals: ShutdownSignals | undefined;

/** For `stdio ARGV`: spawns the upstream now when ARGV names it plainly after `--`. */
export function startStdioUpstreamEarly(argv: readonly string[], cwd: string): void {
  const dash = argv.indexOf("--");
  if (dash === -1 || dash === argv.length - 1 || argv[dash + 1] === "") return;
  const values = new Map<string, string>();
  for (let i = 0; i < dash; i++) {
    const arg = argv[i]!;
    if (ALONE.has(arg)) continue;
    const eq = arg.indexOf("=");
    const [flag, value] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, argv[i + 1]];
    if (!WITH_VALUE.has(flag) || values.has(flag) || value === undefined || (eq <= 0 && i + 1 >= dash)) return;
    const allowed = WITH_VALUE.get(flag);
    if (typeof allowed === "function" ? !allowed(value) : allowed !== undefined && !allowed.has(value)) return;
    values.set(flag, value);
    if (eq <= 0) i++;
  }
  const logFile = values.get("--log-file");
  if (logFile !== undefined) {
    try {
      prepareLogFile(resolve(cwd, logFile));
    } catch {
      return; // the command says why, and starts nothing
    }
  }
  signals = shutdownSignals();
  spawnEarly(argv[dash + 1]!, argv.slice(dash + 2));
}

/** The shutdown signals taken with the early start, once; undefined when there was none. */
export function takeEarlySignals(): ShutdownSignals | undefined {
  const taken = signals;
  signals = undefined;
  return taken;
}
