/**
 * Keys of a server entry that look misspelt are named (the entry still loads: hosts add keys of
 * their own); the keys desktop hosts and editors write are not taken for typos. The warning as
 * `stdio` logs it, from the built CLI.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { misspeltServerKeys } from "../../src/config/misspeltKeys.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const misspelt = (servers: Record<string, unknown>) =>
  misspeltServerKeys(parseConfig(JSON.stringify({ mcpServers: servers }), "p.json", {}));

describe("misspelt keys in a server entry", () => {
  it("are named with the key they are closest to", () => {
    expect(
      misspelt({
        a: { command: "node", argz: [], evn: {}, inheritenv: true },
        b: { url: "https://example.com/mcp", heders: {} },
      }),
    ).toEqual([
      { key: "$.mcpServers.a.argz", meant: "args" },
      { key: "$.mcpServers.a.evn", meant: "env" },
      { key: "$.mcpServers.a.inheritenv", meant: "inheritEnv" },
      { key: "$.mcpServers.b.heders", meant: "headers" },
    ]);
  });

  it("hosts' own keys are not typos (Cline, Cursor, Claude Code, VS Code)", () => {
    expect(
      misspelt({
        cline: {
          command: "node",
          autoApprove: [],
          alwaysAllow: [],
          timeout: 60,
          transportType: "stdio",
          disabled: false,
        },
        cursor: { type: "stdio", command: "node", envFile: ".env" },
        remote: { type: "http", url: "https://example.com/mcp", headers: {} },
        gemini: { httpUrl: "https://example.com/mcp", url: "https://example.com/mcp", oauth: {}, trust: true },
      }),
      // envFile is no typo, but one that changes what the server gets and is not read here: named so.
    ).toEqual([{ key: "$.mcpServers.cursor.envFile", note: expect.stringContaining('"envFile" is not read here') }]);
  });

  it("stdio logs each of the entry it runs at warn (another entry's are not its to tell), and the server runs", async () => {
    const config = join(tempDir("mcpn-misspelt-"), "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { a: { command: process.execPath, argz: ["x"] }, b: { command: process.execPath, evn: {} } },
      }),
    );
    const run = await runCli(["stdio", "--config", config, "--server", "a"], { input: "" });
    expect(run.stderr).toMatch(
      /"level":"warn".*"key":"\$\.mcpServers\.a\.argz".*config key not read, did you mean \\"args\\"\?/,
    );
    expect(run.stderr).not.toContain("mcpServers.b");
  });

  it("audit logs them too, before it waits on a server started without its misspelt args", async () => {
    const config = join(tempDir("mcpn-misspelt-"), "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { a: { command: process.execPath, argz: ["x"] }, b: { command: process.execPath, evn: {} } },
      }),
    );
    const run = await runCli(["audit", "--config", config, "--server", "a", "--timeout", "1500"]);
    expect(run.stderr).toMatch(
      /"level":"warn".*"key":"\$\.mcpServers\.a\.argz".*config key not read, did you mean \\"args\\"\?/,
    );
    expect(run.stderr).not.toContain("mcpServers.b");
    expect(run.code).toBe(1);
  });
});
