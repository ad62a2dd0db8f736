import { describe, expect, it } from "vitest";
import { fitLimitsOf, fitOptionsFor } from "../../src/config/fitPolicy.js";
import { parseConfig } from "../../src/config/load.js";
import { policyOptionsFor } from "../../src/config/policy.js";
import { FitPolicy } from "../../src/fit/fitPolicy.js";
import { DEFAULT_IMAGES } from "../../src/config/defaults.js";

const parse = (extra: Record<string, unknown>, server: Record<string, unknown> = {}) =>
  parseConfig(JSON.stringify({ mcpServers: { a: { command: "node", ...server } }, ...extra }), "p.json", {});

describe("fit settings in the config", () => {
  it("everything is off by default; the limits have their defaults", () => {
    const config = parse({});
    const policy = new FitPolicy(fitOptionsFor(config, config.mcpServers.a), DEFAULT_IMAGES);
    expect(policy.active).toBe(false);
    expect(fitLimitsOf(config)).toEqual({
      imageMaxPixels: 8192 * 8192,
      fitTimeoutMs: 30_000,
      fitHeldBytes: 64 * 1024 * 1024,
      fitConcurrency: 2,
      spillTtlMs: 10 * 60_000,
      spillMaxBytes: 64 * 1024 * 1024,
    });
  });

  it("images: true means the documented defaults; an object overrides field by field, per server too", () => {
    const config = parse(
      { normalize: { images: { maxDimension: 2000 } } },
      { normalize: { images: { maxBytes: 500_000 } } },
    );
    const policy = new FitPolicy(fitOptionsFor(config, config.mcpServers.a), DEFAULT_IMAGES);
    expect(policy.base.images).toEqual({
      maxDimension: 2000,
      maxBytes: 500_000,
      formats: ["image/png", "image/jpeg", "image/gif", "image/webp"],
      resources: false,
    });
    const on = parse({ normalize: { images: true } });
    expect(new FitPolicy(fitOptionsFor(on, on.mcpServers.a), DEFAULT_IMAGES).base.images).toMatchObject({
      maxDimension: 1568,
      maxBytes: 1024 * 1024,
    });
    const off = parse(
      { normalize: { images: true, maxResultBytes: 20_000 } },
      { normalize: { images: false, maxResultBytes: false } },
    );
    expect(new FitPolicy(fitOptionsFor(off, off.mcpServers.a), DEFAULT_IMAGES).active).toBe(false);
  });

  it("rules match a block's mimeType, an embedded resource's URI, and a tool's name", () => {
    const config = parse({
      normalize: {
        images: true,
        rules: [
          { mimeType: "image/svg+xml", set: { images: false } },
          { tool: "browser_*", set: { maxResultBytes: 20_000 } },
          { uri: "file:///docs/**", set: { embeddedResources: "inline" } },
        ],
      },
    });
    const policy = new FitPolicy(fitOptionsFor(config, config.mcpServers.a), DEFAULT_IMAGES);
    expect(policy.for(null, "image/svg+xml", null).images).toBeNull();
    expect(policy.for(null, "image/png", null).images).not.toBeNull();
    expect(policy.for(null, null, "browser_snapshot").maxResultBytes).toBe(20_000);
    expect(policy.for(null, null, "read_file").maxResultBytes).toBeNull();
    expect(policy.for("file:///docs/a/b.md", "text/markdown", null).embeddedResources).toBe("inline");
    expect(policy.for("file:///src/a.ts", "text/plain", null).embeddedResources).toBe("keep");
    expect(policy.mayCut).toBe(true);
  });

  it("the engine never sees the fit keys or tool rules", () => {
    const config = parse({
      normalize: {
        images: true,
        maxResultBytes: 20_000,
        fixMime: false,
        rules: [
          { tool: "x", set: { maxResultBytes: 5000 } },
          { uri: "a://**", set: { images: false, unwrapBlobs: false } },
        ],
      },
    });
    const options = policyOptionsFor(config, config.mcpServers.a) as unknown as Record<string, unknown>;
    expect(options.images).toBeUndefined();
    expect(options.maxResultBytes).toBeUndefined();
    expect(options.fixMime).toBe(false);
    expect(options.rules).toEqual([{ uri: "a://**", set: { unwrapBlobs: false } }]);
  });

  it("errors name the field: a tool rule with an engine key, a too small maxResultBytes, an unknown format", () => {
    expect(() => parse({ normalize: { rules: [{ tool: "x", set: { fixMime: false } }] } })).toThrow(
      /\$\.normalize\.rules\[0\]\.set\.fixMime.*tool/s,
    );
    expect(() => parse({ normalize: { maxResultBytes: 100 } })).toThrow(/\$\.normalize\.maxResultBytes/);
    expect(() => parse({ normalize: { images: { formats: ["image/bmp"] } } })).toThrow(/\$\.normalize\.images/);
    expect(() => parse({ limits: { spillMaxBytes: 0 } })).toThrow(/\$\.limits\.spillMaxBytes/);
  });
});
