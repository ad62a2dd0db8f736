/**
 * Config files written for other MCP hosts, as users paste them: each form the proxy reads is
 * read (Cursor's and VS Code's `${env:NAME}`), and each it does not is named — by the key or
 * variable at fault and what to write instead — before anything else in the file is judged.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigFile, parseConfigText } from "../../src/config/load.js";
import { misspeltServerKeys } from "../../src/config/misspeltKeys.js";
import { tempDir } from "../helpers/tempDir.js";

const parse = (config: unknown, env: Record<string, string> = {}) =>
  parseConfigText(typeof config === "string" ? config : JSON.stringify(config), "host.json", env);

const failure = (config: unknown, env: Record<string, string> = {}): string => {
  try {
    parse(config, env);
  } catch (error) {
    return (error as Error).message;
  }
  return "loaded";
};

describe("other hosts' config files", () => {
  it("${env:NAME} (Cursor, VS Code) reads NAME, a secret like ${NAME}", () => {
    const { config, secretVariables } = parse(
      { mcpServers: { r: { url: "https://api.example.com/mcp", headers: { Authorization: "Bearer ${env:TOKEN}" } } } },
      { TOKEN: "t-123" },
    );
    expect((config.mcpServers.r as { headers: Record<string, string> }).headers.Authorization).toBe("Bearer t-123");
    expect(secretVariables).toEqual(["TOKEN"]);
  });

  it("${env:-default} is still a variable named env with a default", () => {
    const { config } = parse({ mcpServers: { a: { command: "node", env: { K: "${env:-fallback}" } } } });
    expect((config.mcpServers.a as { env: Record<string, string> }).env.K).toBe("fallback");
  });

  it("VS Code's ${input:…} is refused by its path: nothing asks the user here", () => {
    expect(failure({ mcpServers: { a: { command: "node", env: { KEY: "${input:apiKey}" } } } })).toMatch(
      /\$\.mcpServers\.a\.env\.KEY has VS Code's \$\{input:…\}.*write the value, or \$\{VAR\}/,
    );
  });

  it("an editor's own variable unset is named as the editor's", () => {
    expect(failure({ mcpServers: { a: { command: "node", args: ["${workspaceFolder}/s.js"] } } })).toMatch(
      /\$\{workspaceFolder\} is an editor's own variable, not expanded here: give the path itself/,
    );
  });

  it("a VS Code file is pointed to mcpServers before its editor variables are read", () => {
    const message = failure({ servers: { a: { type: "stdio", command: "node", args: ["${workspaceFolder}/s.js"] } } });
    expect(message).toContain('unknown key "servers" (VS Code\'s "servers" is "mcpServers" here)');
    expect(message).not.toContain("workspaceFolder");
  });

  it("Windsurf's serverUrl is named as its url", () => {
    expect(failure({ mcpServers: { w: { serverUrl: "https://api.example.com/mcp" } } })).toContain(
      '"serverUrl" is Windsurf\'s name for "url": call it "url" here',
    );
  });

  it.each(["~/logs/n.jsonl", "~alice/logs/n.jsonl"])("a log.file %s is refused: no shell reads the config", (file) => {
    expect(failure({ mcpServers: { a: { command: "node" } }, log: { file } })).toContain(
      '$.log.file: "~" is not expanded here',
    );
  });

  it("TOML, comments and trailing commas are named as what they are", () => {
    expect(failure('[mcp_servers.x]\ncommand = "npx"\n')).toContain("this reads as TOML (Codex's config.toml)");
    expect(failure('{\n  // mine\n  "mcpServers": {}\n}')).toContain("a comment: JSON has none");
    expect(failure('{"mcpServers": {"a": {"command": "node",}}}')).toContain("a comma before it");
  });

  it("VS Code's envFile is named as not read (its server would start without those variables)", () => {
    const { config } = parse({ mcpServers: { a: { command: "node", envFile: "${env:HOME}/.env" } } }, { HOME: "/h" });
    expect(misspeltServerKeys(config)).toEqual([
      { key: "$.mcpServers.a.envFile", note: expect.stringContaining('"envFile" is not read here') },
    ]);
  });
});

/** A config file of `mcpServers` a (reading A_KEY) and `b`. */
function sharedConfig(b: Record<string, unknown>): string {
  const file = join(tempDir(), "shared.json");
  writeFileSync(file, JSON.stringify({ mcpServers: { a: { command: "node", env: { KEY: "${A_KEY}" } }, b } }));
  return file;
}

describe("a config whose one server is chosen (stdio, audit --server)", () => {
  it("the other servers' variables need not be set; the chosen one's must be", () => {
    const file = sharedConfig({ url: "https://${B_HOST}/mcp", headers: { "X-Key": "${B_KEY}" } });
    const loaded = loadConfigFile(file, { A_KEY: "a-1" }, { onlyServer: "a" });
    expect((loaded.config.mcpServers.a as { env: Record<string, string> }).env.KEY).toBe("a-1");
    // Still a secret of the file: never a child's to read.
    expect(loaded.secretVariables).toEqual(expect.arrayContaining(["B_KEY", "B_HOST"]));
    expect(() => loadConfigFile(file, {}, { onlyServer: "a" })).toThrow(/A_KEY is not set/);
    expect(() => loadConfigFile(file, { A_KEY: "a-1" })).toThrow(/B_/);
  });

  it("a --server the file does not have loads it (to be named as missing), whatever the others lack", () => {
    const file = sharedConfig({ command: "node", env: { T: "${input:t}" } });
    const loaded = loadConfigFile(file, {}, { onlyServer: "gihtub" });
    expect(loaded.enabledInFile).toEqual(["a", "b"]);
    // A server not run may hold VS Code's ${input:…} as it holds an unset variable.
    expect(() => loadConfigFile(file, {}, { onlyServer: "a" })).toThrow(/A_KEY is not set/);
    expect(() => loadConfigFile(file, { A_KEY: "k" }, { onlyServer: "a" })).not.toThrow();
  });

  it("a server entry that is no object is refused for that, not for a variable it names, run or not", () => {
    for (const [entry, shape] of [
      ["${B_UNSET_X}", "Invalid input: expected object, received string"],
      [["${B_UNSET_X}"], "Invalid input: expected object, received array"],
    ] as const) {
      const file = sharedConfig(entry as unknown as Record<string, unknown>);
      for (const onlyServer of ["a", "b", undefined])
        expect(() => loadConfigFile(file, { A_KEY: "k" }, { onlyServer })).toThrow(`$.mcpServers.b: ${shape}`);
    }
  });

  it("a command that runs none (normalize) needs no server's variables, and expands those that are set", () => {
    const file = sharedConfig({ url: "https://example.com/mcp", headers: { Authorization: "Bearer ${B_KEY}" } });
    const loaded = loadConfigFile(file, { A_KEY: "a-1" }, { onlyServer: null });
    expect((loaded.config.mcpServers.a as { env: Record<string, string> }).env.KEY).toBe("a-1");
    expect(loaded.secretVariables).toContain("B_KEY");
  });
});
