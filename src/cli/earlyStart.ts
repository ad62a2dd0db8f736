/**
 * `stdio -- CMD ARGS…`: the upstream is spawned before the proxy loads the rest of itself, so a
 * desktop host waits for the slower of the two starts, not for both in a row. The upstream
 * transport takes the child over when it would spawn the same command line (see
 * transports/upstream/earlyChild.ts); anything unusual on the command line (a config, a URL,
 * help, a flag this does not know) skips the shortcut and the command runs as it always did.
 *
 * The shutdown signals are taken at the same moment: from then on a SIGTERM must end the child
 * too, which Node's default action (killing this process) would not.
 */
import { spawnEarly } from "../transports/upstream/earlyChild.js";
import { shutdownSignals, type ShutdownSignals } from "./signals.js";

/** `stdio` flags that say nothing about the upstream: with only these, the command after `--` is the upstream. */
const WITH_VALUE = new Set(["--log-level", "--log-file", "--charset"]);
const ALONE = new Set(["--dry-run", "--no-browser"]);

let signals: ShutdownSignals | undefined;

/** For `stdio ARGV`: spawns the upstream now when ARGV names it plainly after `--`. */
export function startStdioUpstreamEarly(argv: readonly string[]): void {
  const dash = argv.indexOf("--");
  if (dash === -1 || dash === argv.length - 1) return;
  for (let i = 0; i < dash; i++) {
    const flag = argv[i]!;
    if (ALONE.has(flag)) continue;
    const eq = flag.indexOf("=");
    if (eq > 0 && WITH_VALUE.has(flag.slice(0, eq))) continue;
    if (WITH_VALUE.has(flag) && i + 1 < dash) {
      i++;
      continue;
    }
    return;
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
