/**
 * A stdio server's stderr line too long to log whole is logged by its head: an `env` value the
 * cut went through leaves only its start there, and that start is redacted too — no prefix of
 * the key reaches the operator's log.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OVERSIZED_HEAD_BYTES } from "../../src/wire/lineSplitter.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const SECRET = "sk-live-STRADDLE0123456789abcdefXYZ";

describe("a secret cut by an oversized stderr line's head", () => {
  it("is redacted whole or not shown, wherever the cut falls", async () => {
    const dir = tempDir();
    // Lines over the stderr limit, the key placed so the head's cut goes through each of its characters.
    const script = [
      "const S = process.env.API_KEY;",
      `for (let k = ${OVERSIZED_HEAD_BYTES} - S.length; k <= ${OVERSIZED_HEAD_BYTES}; k++)`,
      "  require('fs').writeSync(2, 'x'.repeat(k) + S + 'y'.repeat(9000) + '\\n');",
      "process.exit(1);",
    ].join("\n");
    const config = join(dir, "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        limits: { stderrLinesLogged: 100_000 },
        mcpServers: { p: { command: process.execPath, args: ["-e", script], env: { API_KEY: SECRET } } },
      }),
    );
    const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
    const run = await runCli(["stdio", "--config", config], {
      input: `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: init })}\n`,
      timeoutMs: 20_000,
    });
    const logged = run.stderr.split("\n").filter((line) => line.includes("upstream stderr"));
    expect(logged.length, run.stderr.slice(0, 2000)).toBeGreaterThan(SECRET.length / 2);
    for (const line of logged) {
      // Any run of 6 characters of the key next to the padding before it is a piece of it.
      const piece = /x(sk-liv[\w-]*)/.exec(line)?.[1];
      expect(piece === undefined || !SECRET.startsWith(piece), line.slice(-200)).toBe(true);
    }
    expect(run.stderr + run.stdout).not.toContain(SECRET.slice(0, 12));
  });
});
