#!/usr/bin/env node
/** The `mcp-normalizer` executable: runs a command and exits with its code. */
import { main } from "./cli/main.js";
import { processIo } from "./cli/io.js";

// Long-running commands (serve, stdio) resolve only when they are done.
const code = await main(process.argv.slice(2), processIo());
process.exit(code);
