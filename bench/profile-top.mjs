#!/usr/bin/env node
/**
 * Top frames of a V8 CPU profile (`node --cpu-prof`), for saying where the proxy's time goes
 * ("a CPU profile, not a guess"). Prints self time by function and inclusive time of
 * the heaviest frames.
 *
 *   node bench/profile-top.mjs FILE.cpuprofile [--top 25] [--callers FUNCTION]
 *
 * --callers names a function (e.g. writeUtf8String) and prints the call stacks its self time
 * comes from, so a native frame can be traced to the code that caused it.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";

const USAGE = `Usage: node bench/profile-top.mjs FILE.cpuprofile… [--top N] [--callers FUNCTION]

  --top N              rows in each table (default 25)
  --callers FUNCTION   the call stacks FUNCTION's self time comes from
  -h, --help           this help
`;
let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string" }, callers: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
} catch (error) {
  process.stderr.write(`profile-top: ${error.message.split("\n")[0]}\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const top = Number(values.top ?? 25);
if (positionals.length === 0 || !Number.isInteger(top) || top < 1) {
  process.stderr.write(positionals.length === 0 ? USAGE : `profile-top: --top takes a whole number\n${USAGE}`);
  process.exit(2);
}

/** Where a frame's code lives: an npm package, a directory of dist/, node internals, or V8's own buckets. */
function moduleOf(url, functionName) {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return `npm:${pkg[1]}`;
  const dist = /\/dist\/(.*)\/[^/]+$/.exec(url);
  if (dist !== null) return `dist/${dist[1]}`;
  if (url.startsWith("node:")) return "node internals";
  return url.replace(/^file:\/\//, "");
}

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Sample time: each sample lasts until the next (timeDeltas[i+1]).
  const selfUs = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const name = (n) => {
    const f = n.callFrame;
    const where = f.url === "" ? "" : ` ${basename(f.url)}:${f.lineNumber + 1}`;
    return `${f.functionName === "" ? "(anonymous)" : f.functionName}${where}`;
  };
  const busy = total - (selfUs.get(profile.nodes.find((n) => n.callFrame.functionName === "(idle)")?.id) ?? 0);
  const bySelf = new Map();
  const byModule = new Map();
  const byInclusive = new Map();
  for (const [id, us] of selfUs) {
    const n = nodes.get(id);
    bySelf.set(name(n), (bySelf.get(name(n)) ?? 0) + us);
    const module = moduleOf(n.callFrame.url, n.callFrame.functionName);
    byModule.set(module, (byModule.get(module) ?? 0) + us);
    // Inclusive: credit every distinct frame on the stack once.
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const key = name(nodes.get(cur));
      if (seen.has(key)) continue;
      seen.add(key);
      byInclusive.set(key, (byInclusive.get(key) ?? 0) + us);
    }
  }
  const show = (title, map) => {
    process.stdout.write(`${title}\n`);
    for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(
        `  ${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}\n`,
      );
    }
  };
  process.stdout.write(`${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms not idle\n`);
  show("self time by package / source directory", byModule);
  show("self time", bySelf);
  show("inclusive time", byInclusive);
  if (values.callers !== undefined) {
    const stacks = new Map();
    for (const [id, us] of selfUs) {
      if (nodes.get(id).callFrame.functionName !== values.callers) continue;
      const frames = [];
      for (let cur = parent.get(id); cur !== undefined && frames.length < 8; cur = parent.get(cur)) {
        const n = nodes.get(cur);
        if (n.callFrame.url.includes("/dist/") || n.callFrame.url.includes("node_modules")) frames.push(name(n));
      }
      const key = frames.join(" < ") || "(no project frame)";
      stacks.set(key, (stacks.get(key) ?? 0) + us);
    }
    show(`callers of ${values.callers} (project frames, innermost first)`, stacks);
  }
}
