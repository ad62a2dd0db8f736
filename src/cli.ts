#!/usr/bin/env node
/** The `mcp-normalizer` executable: runs a command and exits with its code. */
const argv = process.argv.slice(2);
// The long-running commands act on SIGHUP once started; until then it must not end them (Node's
// default action): a stdio upstream already spawned would be orphaned, a serve would not start.
if (argv[0] === "serve" || argv[0] === "stdio") process.on("SIGHUP", () => {});
// `stdio -- CMD`: the upstream is spawned before anything else of the proxy is even loaded (the
// dispatcher included), so its start overlaps all of the proxy's.
if (argv[0] === "stdio") (await import("./cli/earlyStart.js")).startStdioUpstreamEarly(argv.slice(1), process.cwd());
const { main } = await import("./cli/main.js");
const { processIo } = await import("./cli/io.js");

// Long-running commands (serve, stdio) resolve only when they are done.
const code = await main(argv, processIo());
process.exit(code);
