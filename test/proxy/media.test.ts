/**
 * Media blocks through the proxy: image and audio blocks get the mimeType their bytes say, in a tool
 * result, in a prompt, and in a sampling request the server sends to the host — through
 * `stdio` and `/mcp`, against what the pure engine says for the same block; `data` untouched.
 */
import { testPolicy } from "../helpers/policy.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { normalizeRequestParams, normalizeResult } from "../../src/normalize/index.js";
import { loadMediaCorpus } from "../fixtures/corpus/index.js";
import {
  connect,
  hostTransport,
  raw,
  startFixtureServe,
  type Connected,
  type ServeProcess,
} from "../helpers/proxyProcess.js";

const cases = loadMediaCorpus().filter((c) => Object.keys(c.policy).length === 0);
const policy = testPolicy();
let serve: ServeProcess;

beforeAll(async () => {
  serve = await startFixtureServe();
});
afterAll(async () => {
  await serve?.stop();
});

describe.each(["stdio", "mcp"] as const)("image and audio blocks through %s", (kind) => {
  let host: Connected;
  const sampled: unknown[] = [];
  beforeAll(async () => {
    host = await connect(hostTransport(kind, { url: serve.url }), { capabilities: { sampling: {} } });
    host.client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      sampled.push(request.params.messages[0]!.content);
      return { role: "assistant", model: "m", content: { type: "text", text: "ok" } };
    });
  });
  afterAll(async () => {
    await host?.close();
  });

  it(`every media case (${cases.length}) in a tool result and a prompt comes back as the engine says`, async () => {
    expect(cases.length).toBeGreaterThan(50);
    for (const c of cases) {
      const toolResult = await raw(host.client, "tools/call", { name: "media", arguments: { content: [c.input] } });
      const expectedTool = normalizeResult("tools/call", { content: [c.input] }, policy).value as {
        content: unknown[];
      };
      expect(JSON.stringify(toolResult.content), `tool ${c.name}`).toBe(JSON.stringify(expectedTool.content));
      expect(JSON.stringify(expectedTool.content[0]), `engine vs corpus ${c.name}`).toBe(JSON.stringify(c.expected));
      expect((toolResult.content as Array<{ data: string }>)[0]!.data).toBe(c.input.data);

      const prompt = await raw(host.client, "prompts/get", {
        name: "media",
        arguments: { content: JSON.stringify([c.input]) },
      });
      expect(JSON.stringify((prompt.messages as Array<{ content: unknown }>)[0]!.content), `prompt ${c.name}`).toBe(
        JSON.stringify(c.expected),
      );
    }
  });

  it("a sampling request's image block reaches the host with the type its bytes say", async () => {
    // PNG bytes declared image/jpeg (playwright-mcp#1217).
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";
    const block = { type: "image", data: png, mimeType: "image/jpeg" };
    sampled.length = 0;
    await raw(host.client, "tools/call", { name: "sample", arguments: { content: block } });
    expect(sampled).toEqual([{ type: "image", data: png, mimeType: "image/png" }]);
    const expected = normalizeRequestParams(
      "sampling/createMessage",
      { messages: [{ role: "user", content: block }] },
      policy,
    ).value as { messages: Array<{ content: unknown }> };
    expect(sampled[0]).toEqual(expected.messages[0]!.content);
  });

  it("resource_link items get a missing mimeType from the URI's extension", async () => {
    const result = await raw(host.client, "tools/call", {
      name: "media",
      arguments: { content: [{ type: "resource_link", uri: "file:///docs/guide.md", name: "guide" }] },
    });
    expect(result.content).toEqual([
      { type: "resource_link", uri: "file:///docs/guide.md", name: "guide", mimeType: "text/markdown" },
    ]);
  });
});
