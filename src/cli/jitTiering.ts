/**
 * How soon V8 optimizes the proxy's functions in `stdio`. A desktop host starts a fresh `stdio`
 * proxy for every session, and a message goes through the same few dozen functions; with V8's
 * default budget each stays in the interpreter or the baseline tier for about its first thousand
 * messages — most of a session. An eighth of the default budget has them optimized after about
 * an eighth of the messages; the optimized code is the same.
 *
 * Lowered once the command's modules are loaded, not at start-up: loading runs the module
 * loader's functions hundreds of times, and a low budget set before it has V8 optimize those on
 * the cores the upstream is starting on. Not for `serve`: a long-running listener warms up once,
 * and when many sessions open at once on a fresh one, optimizing sooner puts the compiler's work
 * in front of their first reads. An embedding application keeps its own flags, and a budget
 * given on Node's command line wins.
 */
import { setFlagsFromString } from "node:v8";

/** Bytes of bytecode a function runs between two of V8's tiering checks (V8's default: 67584). */
export const INTERRUPT_BUDGET = 8192;

/** Lowers V8's interrupt budget unless `node` was started with one. */
export function tierUpSooner(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((arg) => /^--interrupt[-_]budget(=|$)/.test(arg))) return;
  setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
}
