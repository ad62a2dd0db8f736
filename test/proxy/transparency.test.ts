/**
 * Through the proxy, everything that is not a content to fix is what the upstream gives
 * directly: lists, pagination, ping, progress, sampling, elicitation, subscriptions,
 * cancellation, errors, unknown methods and fields — on every host transport.
 */
import { testPolicy } from "../helpers/policy.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { normalizeResult } from "../../src/normalize/index.js";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import {
  connect,
  HOST_KINDS,
  hostTransport,
  raw,
  startFixtureServe,
  type Connected,
  type HostKind,
  type ServeProcess,
} from "../helpers/proxyProcess.js";

let serve: ServeProcess;
let direct: Connected;

async function hostFor(kind: HostKind): Promise<Connected> {
  const host = await connect(hostTransport(kind, { url: serve.url }), {
    capabilities: { sampling: {}, elicitation: {} },
  });
  host.client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: "assistant",
    model: "test-model",
    content: { type: "text", text: `sampled ${request.params.messages.length}` },
  }));
  host.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }));
  return host;
}

beforeAll(async () => {
  serve = await startFixtureServe();
  direct = await connect(
    new StdioClientTransport({ command: process.execPath, args: [FIXTURE_SERVER], stderr: "pipe" }),
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  direct.client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: "assistant",
    model: "test-model",
    content: { type: "text", text: `sampled ${request.params.messages.length}` },
  }));
  direct.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }));
});
afterAll(async () => {
  await direct?.close();
  await serve?.stop();
});

describe.each(HOST_KINDS)("transparency over %s", (kind) => {
  let host: Connected;
  beforeAll(async () => {
    host = await hostFor(kind);
  });
  afterAll(async () => {
    await host?.close();
  });

  it("tools/list, prompts/list, templates and paginated resources/list equal the upstream's (lists only get mimeTypes filled)", async () => {
    for (const method of ["tools/list", "prompts/list"]) {
      expect(await raw(host.client, method)).toEqual(await raw(direct.client, method));
    }
    const policy = testPolicy();
    for (const method of ["resources/templates/list", "resources/list"]) {
      const upstream = await raw(direct.client, method);
      expect(await raw(host.client, method)).toEqual(normalizeResult(method, upstream, policy).value);
    }
    const page2 = await raw(host.client, "resources/list", { cursor: "25" });
    expect(page2).toEqual(
      normalizeResult("resources/list", await raw(direct.client, "resources/list", { cursor: "25" }), policy).value,
    );
  });

  it("ping, unknown methods with unknown fields, and structuredContent pass untouched", async () => {
    expect(await raw(host.client, "ping")).toEqual({});
    const params = { deep: { list: [1, { x: null }], "weird key": "✓" } };
    expect(await raw(host.client, "vendor/custom-method", params)).toEqual(
      await raw(direct.client, "vendor/custom-method", params),
    );
    const echo = await raw(host.client, "tools/call", { name: "echo", arguments: { a: 1, nested: { blob: "aGk=" } } });
    expect(echo).toEqual(
      await raw(direct.client, "tools/call", { name: "echo", arguments: { a: 1, nested: { blob: "aGk=" } } }),
    );
    const embedded = await raw(host.client, "tools/call", {
      name: "embedded",
      arguments: { case: "markdown-as-octet-stream" },
    });
    const upstream = await raw(direct.client, "tools/call", {
      name: "embedded",
      arguments: { case: "markdown-as-octet-stream" },
    });
    expect(embedded.structuredContent).toEqual(upstream.structuredContent);
    expect(embedded).toEqual(normalizeResult("tools/call", upstream, testPolicy()).value);
    expect((embedded.content as Array<{ resource?: unknown }>)[1]!.resource).toMatchObject({
      uri: "file:///docs/readme.md",
      mimeType: "text/markdown",
      text: "# Title\n\nSome *markdown*.\n",
    });
  });

  it("error responses are the upstream's", async () => {
    const viaProxy = await raw(host.client, "resources/read", { uri: "fixture://nope" }).catch((e: unknown) => e);
    const viaDirect = await raw(direct.client, "resources/read", { uri: "fixture://nope" }).catch((e: unknown) => e);
    expect(viaProxy).toBeInstanceOf(Error);
    expect((viaProxy as { code: number }).code).toBe((viaDirect as { code: number }).code);
    expect((viaProxy as Error).message).toBe((viaDirect as Error).message);
  });

  it("progress notifications reach the host, each before the response they belong to", async () => {
    // The SDK client's own onprogress callback drops progress after the first (the same happens
    // directly), so the test watches the wire: the transport's onmessage.
    const seen: Array<Record<string, unknown>> = [];
    const dispatch = host.transport.onmessage!;
    host.transport.onmessage = (message, extra) => {
      seen.push(message as Record<string, unknown>);
      dispatch(message, extra);
    };
    try {
      const result = await raw(
        host.client,
        "tools/call",
        { name: "progress", arguments: { steps: 4 } },
        { onprogress: () => {} },
      );
      expect(result.content).toEqual([{ type: "text", text: "done 4" }]);
      const progress = seen
        .filter((m) => m.method === "notifications/progress")
        .map((m) => (m.params as { progress: number }).progress);
      expect(progress).toEqual([1, 2, 3, 4]);
      const responseAt = seen.findIndex(
        (m) => "result" in m && (m.result as { content?: unknown }).content !== undefined,
      );
      expect(seen.findLastIndex((m) => m.method === "notifications/progress")).toBeLessThan(responseAt);
    } finally {
      host.transport.onmessage = dispatch;
    }
  });

  it("sampling and elicitation requests from the server reach the host and its answers go back", async () => {
    const sampled = await raw(host.client, "tools/call", { name: "sample", arguments: {} });
    expect(JSON.parse((sampled.content as Array<{ text: string }>)[0]!.text)).toEqual({
      role: "assistant",
      model: "test-model",
      content: { type: "text", text: "sampled 1" },
    });
    const elicited = await raw(host.client, "tools/call", { name: "elicit", arguments: {} });
    expect(JSON.parse((elicited.content as Array<{ text: string }>)[0]!.text)).toEqual({
      action: "accept",
      content: { name: "Ada" },
    });
  });

  it("subscribe brings notifications/resources/updated", async () => {
    const updated = new Promise<string>((resolve) =>
      host.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
    );
    await raw(host.client, "resources/subscribe", { uri: "fixture://own/plain.txt" });
    expect(await updated).toBe("fixture://own/plain.txt");
    await raw(host.client, "resources/unsubscribe", { uri: "fixture://own/plain.txt" });
  });

  it("cancellation: an aborted request is cancelled and the session goes on", async () => {
    const controller = new AbortController();
    const pending = raw(
      host.client,
      "tools/call",
      { name: "sleep", arguments: { ms: 5000 } },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort("test cancels"), 50);
    await expect(pending).rejects.toThrow();
    expect(await raw(host.client, "ping")).toEqual({});
  });
});
