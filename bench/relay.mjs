#!/usr/bin/env node
/**
 * The floor under any stdio proxy: a process that relays bytes between its own
 * stdio and a child's with no parsing at all. Its cost is the extra process and the two pipe hops
 * every stdio→stdio proxy pays; it tells how close to direct a real proxy can get on this machine.
 *
 *   node bench/relay.mjs CMD ARGS…
 */
import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write("usage: node bench/relay.mjs CMD ARGS…\n");
  process.exit(2);
}
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code) => process.exit(code ?? 1));
