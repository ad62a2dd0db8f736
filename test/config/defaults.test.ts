/**
 * config/defaults.ts is the one place a default is written: the zod schema's defaults are its
 * values, and the config built from flags alone (no zod) is exactly what the schema makes of
 * the same server.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_FIT,
  DEFAULT_HOST,
  DEFAULT_IMAGES,
  DEFAULT_LIMITS,
  DEFAULT_LOG_LEVEL,
  DEFAULT_NORMALIZE,
  DEFAULT_PORT,
} from "../../src/config/defaults.js";
import { configForOneServer } from "../../src/config/flagConfig.js";
import { parseConfig } from "../../src/config/load.js";
import { ConfigSchema, configJsonSchema, NormalizeSchema, type ServerConfig } from "../../src/config/schema.js";
import { completePolicyOptions, policyOptionsFor } from "../../src/config/policy.js";
import { Policy } from "../../src/normalize/policy.js";
import { fitOptionsFor } from "../../src/config/fitPolicy.js";
import { FitPolicy } from "../../src/fit/fitPolicy.js";
import { ROOT } from "../helpers/paths.js";

const SERVERS: ReadonlyArray<[string, ServerConfig]> = [
  ["files", { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }],
  ["remote", { url: "https://example.com/mcp", transport: "sse", headers: { "X-Key": "k" } }],
  ["login", { url: "https://example.com/mcp", auth: "oauth" }],
];

describe("config defaults", () => {
  it("the schema's default of every limit is the defaults module's, and no key is missing on either side", () => {
    const parsed = ConfigSchema.parse({ mcpServers: { a: { command: "x" } } });
    expect(parsed.limits).toEqual(DEFAULT_LIMITS);
    expect(parsed.listen).toEqual({ host: DEFAULT_HOST, port: DEFAULT_PORT });
    expect(parsed.log).toEqual({ level: DEFAULT_LOG_LEVEL });
    // Every key the schema knows under limits (two have no default of their own: maxBodyBytes follows
    // maxMessageBytes, maxConnectionsPerClient is half of maxConnections).
    const derived = new Set(["maxBodyBytes", "maxConnectionsPerClient"]);
    const keys = Object.keys(ConfigSchema.shape.limits.unwrap().shape).filter((key) => !derived.has(key));
    expect(keys.sort()).toEqual(Object.keys(DEFAULT_LIMITS).sort());
  });

  it("a config built from flags alone equals the schema's parse of the same server", () => {
    for (const [name, server] of SERVERS) {
      expect(configForOneServer(name, server)).toEqual(ConfigSchema.parse({ mcpServers: { [name]: server } }));
    }
  });

  it("a config from flags gets its own limits object: changing it leaves the defaults alone", () => {
    const config = configForOneServer("a", { command: "x" });
    config.limits.maxBatch = 1;
    expect(DEFAULT_LIMITS.maxBatch).not.toBe(1);
    expect(Object.isFrozen(DEFAULT_LIMITS)).toBe(true);
  });

  it("images: true in a config means the defaults module's image settings", () => {
    const config = parseConfig(
      JSON.stringify({ mcpServers: { a: { command: "x" } }, normalize: { images: true } }),
      "p",
    );
    expect(new FitPolicy(fitOptionsFor(config, config.mcpServers.a), DEFAULT_IMAGES).base.images).toEqual(
      DEFAULT_IMAGES,
    );
    // The schema's help text names the same values.
    const schema = JSON.stringify(configJsonSchema());
    expect(schema).toContain(`longest side in pixels (default ${DEFAULT_IMAGES.maxDimension})`);
    expect(schema).toContain(`bytes of one image after fitting (default ${DEFAULT_IMAGES.maxBytes})`);
  });

  it("a config without normalize gets the defaults module's switches and fit keys", () => {
    const config = parseConfig(JSON.stringify({ mcpServers: { a: { command: "x" } } }), "p");
    expect(policyOptionsFor(config, config.mcpServers.a)).toEqual({
      ...DEFAULT_NORMALIZE,
      maxNormalizeBytes: DEFAULT_LIMITS.maxNormalizeBytes,
      charsetDetectionBytes: DEFAULT_LIMITS.charsetDetectionBytes,
      rules: [],
    });
    expect(fitOptionsFor(config, config.mcpServers.a)).toEqual({ ...DEFAULT_FIT, rules: [] });
    const fit = new FitPolicy(fitOptionsFor(config, config.mcpServers.a), DEFAULT_IMAGES);
    expect(fit.active).toBe(false);
    expect(fit.base).toEqual({ images: null, embeddedResources: "keep", maxResultBytes: null, dryRun: false });
    // Settings given in code (the library's decorator) get the same defaults.
    const { textual: _textual, ...base } = new Policy(completePolicyOptions()).base;
    expect(base).toEqual({ ...DEFAULT_NORMALIZE, maxNormalizeBytes: DEFAULT_LIMITS.maxNormalizeBytes });
    expect(Object.isFrozen(DEFAULT_NORMALIZE) && Object.isFrozen(DEFAULT_FIT)).toBe(true);
  });

  it("the help text of every normalize key names the defaults module's value", () => {
    const shape = NormalizeSchema.shape as Record<string, { description?: string }>;
    for (const [key, value] of Object.entries({ ...DEFAULT_NORMALIZE, ...DEFAULT_FIT })) {
      expect(shape[key]?.description, key).toContain(`(default ${JSON.stringify(value)})`);
    }
  });

  it("the defaults module imports nothing but types (it is on every command's start-up path)", () => {
    const source = readFileSync(join(ROOT, "src", "config", "defaults.ts"), "utf8");
    const imports = [...source.matchAll(/^import\s+(type\s+)?[^;]*;/gm)];
    expect(imports.filter((m) => m[1] === undefined).map((m) => m[0])).toEqual([]);
  });
});
