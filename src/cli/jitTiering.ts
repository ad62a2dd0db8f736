/**
 * How soon V8 optimizes the proxy's functions in `stdio`. A desktop host starts a fresh `stdio`
 * proxy for every session, and every message goes through the same few dozen functions; with
 * V8's default interrupt budget they run unoptimized through much of a session. A lower budget
 * has V8 optimize them several times sooner; the optimized code is the same.
 *
 * Lowered once the host has its first answer, not at start-up: while modules load, a low budget
 * has V8 optimize the module loader's own functions, on the cores the upstream is starting on;
 * and a changed V8 flag turns Node's code cache off for its own modules loaded afterwards, so
 * those the message path loads on first use (timing, `fetch`) must be loaded by then. Not for
 * `serve`: a long-running listener warms up once, and when many sessions open at once on a fresh
 * one, optimizing sooner puts the compiler's work in front of their first reads. Only on the V8
 * it was measured on (Node 20's); an embedding application keeps its own flags, and a budget
 * given on Node's command line wins.
 */
import { setFlagsFromString } from "node:v8";
import type { ProxyTransport } from "../transports/types.js";

/** Bytes of bytecode a function runs between two of V8's tiering checks (V8 11's default: 67584). */
export const INTERRUPT_BUDGET = 8192;

/** The V8 major version the budget was chosen on (later ones tier up differently). */
const MEASURED_ON_V8 = "11.";

/** Whether node's command line already sets the budget (`--interrupt-budget=N`, any spelling node takes). */
export function budgetGivenIn(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--?interrupt[-_]budget(=|$)/.test(arg));
}

/** Lowers V8's interrupt budget, unless node was started with one or runs another V8. */
export function tierUpSooner(execArgv: readonly string[] = process.execArgv, v8Version = process.versions.v8): void {
  if (budgetGivenIn(execArgv) || !v8Version.startsWith(MEASURED_ON_V8)) return;
  setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
}

/** Calls `tierUpSooner` once, right after the first message is written to `host`. */
export function tierUpAfterFirstAnswer(host: Pick<ProxyTransport, "send">): void {
  const send = host.send;
  host.send = function firstSend(this: typeof host, ...args: Parameters<typeof send>) {
    host.send = send;
    const sent = send.apply(this, args);
    tierUpSooner();
    return sent;
  };
}
