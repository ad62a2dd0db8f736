import { tmpdir } from "node:os";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig, loadConfigFile } from "../../src/config/load.js";
import { configJsonSchema } from "../../src/config/schema.js";
import { policyOptionsFor } from "../../src/config/policy.js";
import { NormalizerError } from "../../src/errors/NormalizerError.js";
import { ROOT } from "../helpers/paths.js";

function errorOf(fn: () => unknown): NormalizerError {
  try {
    fn();
  } catch (error) {
    if (error instanceof NormalizerError) return error;
    throw error;
  }
  throw new Error("expected a NormalizerError");
}

describe("config", () => {
  it("the checked-in JSON Schema is generated from the zod schema (run `npm run schema` when this fails)", () => {
    const checkedIn = JSON.parse(readFileSync(join(ROOT, "config", "proxy.config.schema.json"), "utf8"));
    expect(checkedIn).toEqual(JSON.parse(JSON.stringify(configJsonSchema())));
  });

  it("the JSON Schema's URL pattern takes what the proxy takes, in either case (a pattern has no flags)", () => {
    const text = readFileSync(join(ROOT, "config", "proxy.config.schema.json"), "utf8");
    const patterns = [...text.matchAll(/"pattern": "(\^\([^"]*:[^"]*)"/g)].map(
      (m) => new RegExp(JSON.parse(`"${m[1]}"`)),
    );
    expect(patterns.length).toBeGreaterThan(0);
    for (const pattern of patterns) {
      for (const url of ["https://x.example/mcp", "HTTPS://x.example/mcp", "Ws://x/", "wss://x/"]) {
        expect(pattern.test(url), `${pattern} ${url}`).toBe(true);
        expect(() => parseConfig(JSON.stringify({ mcpServers: { a: { url } } }), "p.json", {})).not.toThrow();
      }
      expect(pattern.test("ftp://x/")).toBe(false);
    }
  });

  it("the top-level proxy.config.json and every example config are valid", () => {
    const env = { MCPN_TOKEN: "secret-token" };
    const files = [
      join(ROOT, "proxy.config.json"),
      // Only the configs: running an example writes its log folder beside it (`logs/`).
      ...readdirSync(join(ROOT, "config", "examples"))
        .filter((f) => f.endsWith(".json"))
        .map((f) => join(ROOT, "config", "examples", f)),
    ];
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const file of files) {
      const { config } = loadConfigFile(file, env);
      expect(Object.keys(config.mcpServers).length).toBeGreaterThan(0);
    }
  });

  it("only mcpServers is required; defaults fill the rest", () => {
    const config = parseConfig('{"mcpServers":{"a":{"command":"node"}}}', "inline.json", {});
    expect(config.listen).toEqual({ host: "127.0.0.1", port: 8808 });
    expect(config.limits.maxMessageBytes).toBe(256 * 1024 * 1024);
    expect(config.limits.requestTimeoutMs).toBe(300_000);
    expect(config.log.level).toBe("info");
  });

  it("a desktop host's mcpServers block pastes in as is (unknown per-server keys kept)", () => {
    const desktop = {
      mcpServers: {
        fs: {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
          env: { A: "1" },
          alwaysAllow: ["read_file"],
          disabled: false,
        },
        remote: { type: "http", url: "https://example.test/mcp", headers: { "X-Key": "k" } },
      },
    };
    const config = parseConfig(JSON.stringify(desktop), "claude_desktop_config.json", {});
    expect(config.mcpServers.fs).toMatchObject({ command: "npx", alwaysAllow: ["read_file"] });
    expect(config.mcpServers.remote).toMatchObject({ url: "https://example.test/mcp" });
  });

  it("errors name the file and the JSON path at fault", () => {
    const e1 = errorOf(() =>
      parseConfig('{"mcpServers":{"a":{"command":"node"}},"limits":{"maxSessions":-1}}', "p.json", {}),
    );
    expect(e1.code).toBe("CONFIG_INVALID");
    expect(e1.message).toContain("p.json");
    expect(e1.message).toContain("$.limits.maxSessions");

    const e2 = errorOf(() => parseConfig('{"mcpServers":{"a":{"args":["x"]}}}', "p.json", {}));
    expect(e2.message).toContain("$.mcpServers.a");
    expect(e2.message).toMatch(/command.*url/);

    const e3 = errorOf(() => parseConfig('{"mcpServers":{"a":{"command":"x"}},"lisen":{}}', "p.json", {}));
    expect(e3.message).toContain('unknown key "lisen"');

    const e4 = errorOf(() => parseConfig("{", "broken.json", {}));
    expect(e4.code).toBe("CONFIG_INVALID_JSON");
    expect(e4.message).toContain("broken.json");

    const e5 = errorOf(() => parseConfig('{"mcpServers":{}}', "p.json", {}));
    expect(e5.message).toContain("$.mcpServers");

    // Past what Node's timers keep, a timer fires at once: refused.
    const e6 = errorOf(() =>
      parseConfig('{"mcpServers":{"a":{"command":"x"}},"limits":{"requestTimeoutMs":3000000000}}', "p.json", {}),
    );
    expect(e6.message).toContain("$.limits.requestTimeoutMs: at most 2147483647 ms");

    // A remote server with a bad field is named by that field, not as a stdio server missing its command.
    for (const [field, value] of [
      ["transport", '"htp"'],
      ["headers", '"X-Key: abc"'],
    ]) {
      const text = `{"mcpServers":{"app":{"url":"http://127.0.0.1:9/mcp","${field}":${value}}}}`;
      const error = errorOf(() => parseConfig(text, "p.json", {}));
      expect(error.message).toContain(`$.mcpServers.app.${field}:`);
      expect(error.message).not.toContain("command");
    }
    // A command or url of the wrong type is named, not taken for a missing one.
    const typed = errorOf(() => parseConfig('{"mcpServers":{"app":{"command":5}}}', "p.json", {}));
    expect(typed.message).toContain("$.mcpServers.app.command:");
    const stdio = errorOf(() => parseConfig('{"mcpServers":{"app":{"command":"node","args":"x"}}}', "p.json", {}));
    expect(stdio.message).toContain("$.mcpServers.app.args:");
    expect(stdio.message).not.toContain("url");
  });

  it("${VAR} reads the environment; a missing one names the variable and the path", () => {
    const text =
      '{"mcpServers":{"r":{"url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}},"auth":{"bearerTokens":["${MISSING:-fallback}"]}}';
    const config = parseConfig(text, "p.json", { TOKEN: "abc" });
    expect(config.mcpServers.r).toMatchObject({ headers: { Authorization: "Bearer abc" } });
    expect(config.auth?.bearerTokens).toEqual(["fallback"]);
    const error = errorOf(() => parseConfig(text, "p.json", {}));
    expect(error.code).toBe("CONFIG_ENV_MISSING");
    expect(error.message).toContain("TOKEN");
    expect(error.message).toContain("$.mcpServers.r.headers.Authorization");
  });

  it("a header value no HTTP header can carry (a line break from ${VAR}) is refused by name, never quoted", () => {
    const text = '{"mcpServers":{"r":{"url":"http://127.0.0.1:9/sse","headers":{"X-Api-Key":"${KEY}"}}}}';
    const error = errorOf(() => parseConfig(text, "p.json", { KEY: "sk-live-secret-123\nsecond-line" }));
    expect(error.message).toContain(`$.mcpServers.r.headers["X-Api-Key"]`);
    expect(error.message).toContain("line break");
    expect(error.message).not.toContain("secret");
    expect(parseConfig(text, "p.json", { KEY: "sk-live\tok" }).mcpServers.r).toMatchObject({
      headers: { "X-Api-Key": "sk-live\tok" },
    });
  });

  it("a NUL in a command, an argument or an env name or value, or a header name HTTP does not allow: refused by name", () => {
    const stdio = '{"mcpServers":{"a":{"command":"node","args":["${ARG}"],"env":{"DB_PASSWORD":"${PW}"}}}}';
    const env = { ARG: "ok", PW: "hunter2-secret\u0000x" };
    const error = errorOf(() => parseConfig(stdio, "p.json", env));
    expect(error.message).toContain("$.mcpServers.a.env.DB_PASSWORD: holds a NUL character");
    expect(error.message).not.toContain("hunter2");
    const arg = errorOf(() => parseConfig(stdio, "p.json", { ARG: "a\u0000b", PW: "ok" }));
    expect(arg.message).toContain("$.mcpServers.a.args[0]: holds a NUL character");
    expect(parseConfig(stdio, "p.json", { ARG: "a b", PW: "hunter2" }).mcpServers.a).toMatchObject({
      env: { DB_PASSWORD: "hunter2" },
    });
    // A name is not shown either: it may be a credential pasted with its colon forgotten.
    const remote = '{"mcpServers":{"r":{"url":"http://127.0.0.1:9/mcp","headers":{"Bearer sk-live-5f1e":"x"}}}}';
    const badName = errorOf(() => parseConfig(remote, "p.json", {})).message;
    expect(badName).toContain("$.mcpServers.r.headers: a header's name (not shown) is not an HTTP header name");
    expect(badName).not.toContain("sk-live");
  });

  it("text that is not JSON: line, column and the field being read, never a quote of the file", () => {
    const text =
      '{\n  "mcpServers": {"a": {"command": "x"}},\n  "auth": {"bearerTokens": ["sekrit-token-value", oops]}\n}';
    const e = errorOf(() => parseConfig(text, "p.json", {}));
    expect(e.code).toBe("CONFIG_INVALID_JSON");
    expect(e.message).toBe(
      "p.json is not valid JSON at line 3, column 51 (in $.auth.bearerTokens[1]): expected a value (a string in double quotes, a number, true, false, null, an object or an array)",
    );
    expect(e.message).not.toContain("sekrit");
    const trailing = errorOf(() => parseConfig('{"mcpServers": {"a": {"command": "x",}}}', "p.json", {}));
    expect(trailing.message).toContain("line 1, column 38 (in $.mcpServers.a): expected a string in double quotes");
    const missingComma = errorOf(() =>
      parseConfig('{"mcpServers": {"a": {"command": "x"}}\n"limits": {}}', "p.json", {}),
    );
    expect(missingComma.message).toContain("line 2, column 1 (in $): expected ',' or '}' after a member");
    expect(errorOf(() => parseConfig("{", "p.json", {})).message).toContain("line 1, column 2");
    // A byte order mark (Windows editors) is not an error.
    expect(Object.keys(parseConfig('\ufeff{"mcpServers":{"a":{"command":"x"}}}', "p.json", {}).mcpServers)).toEqual([
      "a",
    ]);
  });

  it("a key named __proto__ is refused with its path, not dropped", () => {
    const e = errorOf(() =>
      parseConfig('{"mcpServers":{"__proto__":{"command":"x"},"b":{"command":"y"}}}', "p.json", {}),
    );
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.message).toContain('$.mcpServers.__proto__: "__proto__" cannot be used as a name here');
    const inEnv = errorOf(() =>
      parseConfig('{"mcpServers":{"a":{"command":"x","env":{"__proto__":"1"}}}}', "p.json", {}),
    );
    expect(inEnv.message).toContain("$.mcpServers.a.env.__proto__");
  });

  it("an empty variable is named as empty, with the default form that takes it", () => {
    const text = JSON.stringify({ mcpServers: { a: { command: "x", env: { K: "${EMPTY}" } } } });
    const empty = errorOf(() => parseConfig(text, "p.json", { EMPTY: "" }));
    expect(empty.message).toContain("the environment variable EMPTY is empty (a default: ${EMPTY:-value})");
  });

  it("a disabled server's variables need not be set: it is never started", () => {
    const text = JSON.stringify({
      mcpServers: {
        on: { command: "x", env: { K: "${SET}" } },
        off: { command: "y", args: ["${MISSING}"], env: { K: "${MISSING}", L: "${SET}" }, disabled: true },
      },
    });
    const config = parseConfig(text, "p.json", { SET: "v" });
    expect(config.mcpServers.on).toMatchObject({ env: { K: "v" } });
    expect(config.mcpServers.off).toMatchObject({ args: ["${MISSING}"], env: { K: "${MISSING}", L: "v" } });
    // Its URL too, wherever the variable stands in it.
    for (const url of ["${OFF_URL}", "http://localhost:${OFF_PORT}/mcp"]) {
      const remote = JSON.stringify({ mcpServers: { on: { command: "x" }, off: { url, disabled: true } } });
      expect(parseConfig(remote, "p.json", {}).mcpServers.off).toMatchObject({ url });
      const enabled = remote.replace('"disabled":true', '"disabled":false');
      expect(() => parseConfig(enabled, "p.json", { OFF_URL: "${X}", OFF_PORT: "x y" })).toThrow(/url/);
    }
    // Enabled, the same server needs them.
    const enabled = text.replace('"disabled":true', '"disabled":false');
    expect(errorOf(() => parseConfig(enabled, "p.json", { SET: "v" })).code).toBe("CONFIG_ENV_MISSING");
  });

  it("${A:-${B}}: a default may hold references, expanded only when used", () => {
    const text = (value: string) => JSON.stringify({ mcpServers: { a: { command: "x", args: [value] } } });
    const args = (value: string, env: Record<string, string>) =>
      (parseConfig(text(value), "p.json", env).mcpServers.a as { args: string[] }).args[0];
    expect(args("${A:-${B}}", { A: "a" })).toBe("a");
    expect(args("${A:-${B}}", { B: "b" })).toBe("b");
    expect(args("x-${A:-${B:-deep}}-y", {})).toBe("x-deep-y");
    expect(args("${A:-pre ${B:-} post}", {})).toBe("pre  post");
    expect(args("${A:-}", {})).toBe("");
    expect(args("$HOME ${ not a ref } $${A}", { A: "v" })).toBe("$HOME ${ not a ref } $v");
    const missing = errorOf(() => parseConfig(text("${A:-${B}}"), "p.json", {}));
    expect(missing.code).toBe("CONFIG_ENV_MISSING");
    expect(missing.message).toContain("environment variable B is not set");
    expect(missing.message).toContain("$.mcpServers.a.args[0]");
    // Other shell forms stay as written; a reference with no closing brace is an error naming the path.
    expect(args("echo ${HOME/a/b} ${X#p}", {})).toBe("echo ${HOME/a/b} ${X#p}");
    const unclosed = errorOf(() => parseConfig(text("Bearer ${TOKEN"), "p.json", { TOKEN: "t" }));
    expect(unclosed.message).toContain('p.json: $.mcpServers.a.args[0] has ${TOKEN with no closing "}"');
  });

  it("a missing config file is a clear error", () => {
    const error = errorOf(() => loadConfigFile("/nonexistent/proxy.config.json", {}));
    expect(error.code).toBe("CONFIG_NOT_FOUND");
    expect(error.message).toContain("/nonexistent/proxy.config.json");
    // A folder named as the config: said plainly, not as the system call's error.
    const folder = errorOf(() => loadConfigFile(tmpdir(), {}));
    expect(folder.message).toBe(`cannot read config file ${tmpdir()}: a folder, not a file`);
    // Read again on SIGHUP (regular files only): a folder is named as one there too.
    const again = errorOf(() => loadConfigFile(tmpdir(), {}, { regularFileOnly: true }));
    expect(again.message).toBe(`cannot read config file ${tmpdir()} again: it is a folder now, not a file`);
  });

  it("a value of a type no option of a union takes is told every type it may be", () => {
    const images = errorOf(() =>
      parseConfig('{"mcpServers":{"a":{"command":"node"}},"normalize":{"images":"yes"}}', "p.json", {}),
    );
    expect(images.message).toContain("$.normalize.images: Invalid input: expected boolean or object, received string");
    // Inside an option it is the option's field that is named.
    const inner = errorOf(() =>
      parseConfig('{"mcpServers":{"a":{"command":"node"}},"normalize":{"images":{"maxDimension":"x"}}}', "p.json", {}),
    );
    expect(inner.message).toContain("$.normalize.images.maxDimension: Invalid input: expected number, received string");
  });

  it("per-server normalize overrides the global one; rules of both apply, the server's last", () => {
    const config = parseConfig(
      JSON.stringify({
        mcpServers: {
          a: {
            command: "x",
            normalize: { charset: "preserve", rules: [{ uri: "file:///b/**", set: { unwrapBlobs: false } }] },
          },
          b: { command: "y" },
        },
        normalize: { dryRun: true, charset: "transcode", rules: [{ mimeType: "image/*", set: { fixMime: false } }] },
        limits: { maxNormalizeBytes: 1000 },
      }),
      "p.json",
      {},
    );
    const a = policyOptionsFor(config, config.mcpServers.a);
    expect(a).toMatchObject({ charset: "preserve", dryRun: true, maxNormalizeBytes: 1000 });
    expect(a.rules?.map((r) => r.uri ?? r.mimeType)).toEqual(["image/*", "file:///b/**"]);
    expect(policyOptionsFor(config, config.mcpServers.b)).toMatchObject({ charset: "transcode", dryRun: true });
  });
});
