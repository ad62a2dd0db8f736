/**
 * The options an in-process host gives `withNormalization` are checked as a config file is:
 * what the config refuses is refused here, before anything runs, naming each option at fault.
 */
import { describe, expect, it } from "vitest";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { DEFAULT_IMAGES, NormalizerError, Policy, completePolicyOptions, withNormalization } from "../../src/index.js";
import { FitPolicy } from "../../src/fit/fitPolicy.js";
import { DEFAULT_FIT, DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { fitLimitsOf } from "../../src/config/fitPolicy.js";
import { createFitRuntime } from "../../src/fit/runtime.js";

function refusal(options: unknown): string {
  const [, side] = InMemoryTransport.createLinkedPair();
  try {
    withNormalization(side, options as never);
  } catch (error) {
    expect(error).toBeInstanceOf(NormalizerError);
    expect((error as NormalizerError).code).toBe("CONFIG_INVALID");
    return (error as Error).message;
  }
  throw new Error("accepted");
}

describe("withNormalization's options", () => {
  it("refuses what a config file would, one line per option at fault, naming it and what was given", () => {
    const message = refusal({
      policy: { maxNormalizeBytes: -5, charset: "nope", unwrapBlob: true },
      fit: { policy: { maxResultBytes: -1, embeddedResources: "explode", images: { maxDimension: -3 } } },
      maxTrackedTasks: -1,
    });
    const lines = message.split("\n");
    expect(lines[0]).toBe("withNormalization: options not valid:");
    expect(lines.slice(1).map((line) => line.trim().split(":")[0])).toEqual(
      expect.arrayContaining([
        "options.policy",
        "options.policy.maxNormalizeBytes",
        "options.policy.charset",
        "options.fit.policy.maxResultBytes",
        "options.fit.policy.embeddedResources",
        "options.fit.policy.images.maxDimension",
        "options.maxTrackedTasks",
      ]),
    );
    // A misspelt key is named with the one meant; a number refused is shown as given.
    expect(message).toContain('unknown key "unwrapBlob" (did you mean "unwrapBlobs"?)');
    expect(message).toMatch(/options\.policy\.maxNormalizeBytes: .*got -5/);
    expect(message).not.toMatch(/\n\s+at /);
  });

  it("refuses a wrong type, an image setting of the wrong kind and fit limits out of bounds", () => {
    expect(refusal({ fit: { policy: { images: { maxDimension: "abc" } } } })).toMatch(
      /options\.fit\.policy\.images.*expected/,
    );
    expect(refusal({ fit: { policy: { images: "yes" } } })).toMatch(
      /options\.fit\.policy\.images: .*boolean or object/,
    );
    expect(refusal({ fit: { policy: {}, limits: { fitHeldBytes: 0 } } })).toMatch(
      /options\.fit\.limits\.fitHeldBytes: Too small.*got 0/,
    );
    expect(refusal({ fit: { policy: {}, limits: { fitHeldByte: 1 } } })).toContain(
      'options.fit.limits: unknown key "fitHeldByte" (did you mean "fitHeldBytes"?)',
    );
    expect(refusal({ policy: { rules: [{ uri: "x://*", set: { images: true } }] } })).toContain(
      'options.policy.rules[0].set: unknown key "images"',
    );
    expect(refusal({ fit: { policy: { rules: [{ tool: "", set: { maxResultBytes: 4096 } }] } } })).toMatch(
      /options\.fit\.policy\.rules\[0\]\.tool: Too small/,
    );
  });

  it("refuses a misspelt option at the top and under fit, and limits beside a runtime of the caller's own", () => {
    expect(refusal({ polcy: { dryRun: true } })).toContain('options: unknown key "polcy" (did you mean "policy"?)');
    expect(refusal({ fit: { policy: {}, limts: { fitHeldBytes: 4096 } } })).toContain(
      'options.fit: unknown key "limts" (did you mean "limits"?)',
    );
    const runtime = createFitRuntime(fitLimitsOf({ limits: DEFAULT_LIMITS }));
    expect(refusal({ fit: { policy: {}, runtime, limits: { fitHeldBytes: 4096 } } })).toContain(
      "options.fit.limits: give limits or a runtime, not both",
    );
  });

  it("refuses options that are not an object, a fit that is not one, and callbacks that are not functions", () => {
    expect(refusal(null)).toBe("withNormalization: options not valid: expected an object, got null");
    expect(refusal("yes")).toBe("withNormalization: options not valid: expected an object, got string");
    expect(refusal([])).toBe("withNormalization: options not valid: expected an object, got an array");
    expect(refusal({ fit: null })).toMatch(/^withNormalization: options not valid:\n\s*options\.fit: /);
    for (const name of ["onNormalized", "onEngineError", "now"])
      expect(refusal({ [name]: "console.log" })).toMatch(new RegExp(`options\\.${name}: expected a function`));
  });

  it("refuses a transport that is none, naming what was given", () => {
    for (const [given, got] of [
      [null, "null"],
      [undefined, "undefined"],
      [{ send() {} }, "object"],
    ] as const) {
      const thrown = (() => {
        try {
          withNormalization(given as never);
        } catch (error) {
          return error as NormalizerError;
        }
        throw new Error("accepted");
      })();
      expect(thrown).toBeInstanceOf(NormalizerError);
      expect(thrown.message).toBe(
        `withNormalization: transport not valid: expected an MCP transport (an object with start, send and close), got ${got}`,
      );
    }
  });

  it("says where a fit key given with the engine's keys, or beside fit.policy, goes", () => {
    expect(refusal({ policy: { images: true } })).toBe(
      'withNormalization: options not valid:\n  options.policy: unknown key "images" ' +
        "(images, embeddedResources, maxResultBytes go under fit.policy)",
    );
    expect(refusal({ fit: { policy: {}, maxResultBytes: 5000 } })).toBe(
      'withNormalization: options not valid:\n  options.fit: unknown key "maxResultBytes" ' +
        "(images, embeddedResources, maxResultBytes go under fit.policy)",
    );
  });

  it("takes null for a callback as none, as JavaScript callers write it", async () => {
    const [server, side] = InMemoryTransport.createLinkedPair();
    // Typed so too: no cast needed.
    const wrapped = withNormalization(side, { onNormalized: null, onEngineError: null, now: null });
    const received: unknown[] = [];
    wrapped.onmessage = (message) => received.push(message);
    await wrapped.start();
    await server.start();
    await wrapped.send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "mem://a.txt" } });
    const blob = Buffer.from("plain text").toString("base64");
    await server.send({ jsonrpc: "2.0", id: 1, result: { contents: [{ uri: "mem://a.txt", blob }] } });
    expect(received).toMatchObject([{ id: 1, result: { contents: [{ text: "plain text" }] } }]);
  });

  it("takes valid options, compiled policies and callbacks as they are", () => {
    const [, side] = InMemoryTransport.createLinkedPair();
    const wrapped = withNormalization(side, {
      policy: {
        unwrapBlobs: true,
        maxNormalizeBytes: 1024,
        recordUnchanged: false,
        charsetDetectionBytes: 4096,
        rules: [{ uri: "file:///**", mimeType: "text/*", set: { fixMime: false } }],
      },
      fit: {
        policy: {
          images: { maxDimension: 512, formats: ["image/png"] },
          maxResultBytes: 4096,
          embeddedResources: "inline",
          rules: [{ tool: "shot", set: { images: false } }],
        },
        limits: { fitHeldBytes: 1 << 20, fitConcurrency: 1 },
      },
      maxTrackedTasks: 10,
      onNormalized: () => {},
    });
    expect(wrapped.inner).toBe(side);
    const compiled = withNormalization(side, {
      policy: new Policy(completePolicyOptions({ fixMime: false })),
      fit: { policy: new FitPolicy({ ...DEFAULT_FIT, images: true }, DEFAULT_IMAGES) },
    });
    expect(compiled.inner).toBe(side);
  });
});
