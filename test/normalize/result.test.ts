/**
 * Where contents appear: `tools/call` resource items (never structuredContent),
 * `prompts/get` messages, `resources/list` / `resources/templates/list` type fill, sampling
 * request params, and whole JSON-RPC messages — plus the change-record fields of each.
 */
import { testPolicy } from "../helpers/policy.js";
import { describe, expect, it } from "vitest";
import { corpusFile } from "../fixtures/corpus/index.js";
import {
  normalizeMessage,
  normalizeRequestParams,
  normalizeResult,
  RESULT_METHODS,
} from "../../src/normalize/index.js";

const policy = testPolicy();
const mdBlob = corpusFile("text/utf8.md").toString("base64");
const mdText = corpusFile("text/utf8.md").toString("utf8");
const png = corpusFile("media/tiny.png").toString("base64");
const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), "utf8");

describe("tools/call", () => {
  it("rewrites resource items and media blocks only; text items and structuredContent are the same objects", () => {
    const structured = { contents: [{ uri: "file:///x.md", mimeType: "application/octet-stream", blob: mdBlob }] };
    const result = {
      content: [
        { type: "text", text: "here" },
        {
          type: "resource",
          resource: { uri: "file:///x.md", mimeType: "application/octet-stream", blob: mdBlob },
          annotations: { priority: 1 },
        },
        { type: "image", data: png, mimeType: "image/jpeg" },
      ],
      structuredContent: structured,
      isError: false,
    };
    const out = normalizeResult("tools/call", result, policy);
    const value = out.value as typeof result;
    expect(value.structuredContent).toBe(structured);
    expect(value.content[0]).toBe(result.content[0]);
    expect(value.content[1]).toEqual({
      type: "resource",
      resource: { uri: "file:///x.md", mimeType: "text/markdown", text: mdText },
      annotations: { priority: 1 },
    });
    expect(value.content[2]).toEqual({ type: "image", data: png, mimeType: "image/png" });
    expect(Object.keys(value)).toEqual(["content", "structuredContent", "isError"]);
    expect(out.changes.map((r) => [r.path, r.action])).toEqual([
      ["content[1].resource", "unwrap-blob"],
      ["content[2]", "fix-mime"],
    ]);
    const record = out.changes[0]!;
    expect(record).toMatchObject({
      uri: "file:///x.md",
      mimeBefore: "application/octet-stream",
      mimeAfter: "text/markdown",
      applied: true,
    });
    expect(record.bytesBefore).toBe(bytes(result.content[1]!.resource));
    expect(record.bytesAfter).toBe(bytes(value.content[1]!.resource));
    expect(record.saved).toBeGreaterThan(0);
  });

  it("returns the very same result when nothing changes", () => {
    const result = {
      content: [
        { type: "text", text: "a" },
        { type: "resource", resource: { uri: "mem://a", mimeType: "text/plain", text: "a" } },
      ],
    };
    const out = normalizeResult("tools/call", result, policy);
    expect(out.value).toBe(result);
    expect(out.changes.map((r) => r.action)).toEqual(["none"]);
  });
});

describe("prompts/get", () => {
  it("rewrites resource and media content of each message, single block or list", () => {
    const result = {
      description: "d",
      messages: [
        { role: "user", content: { type: "text", text: "hi" } },
        {
          role: "user",
          content: { type: "resource", resource: { uri: "mem://m", mimeType: "text/plain", blob: mdBlob } },
        },
        {
          role: "assistant",
          content: [
            { type: "image", data: png },
            { type: "text", text: "x" },
          ],
        },
      ],
    };
    const out = normalizeResult("prompts/get", result, policy);
    const value = out.value as typeof result;
    expect(value.messages[0]).toBe(result.messages[0]);
    expect(value.messages[1]!.content).toEqual({
      type: "resource",
      resource: { uri: "mem://m", mimeType: "text/plain", text: mdText },
    });
    expect(value.messages[2]!.content).toEqual([
      { type: "image", data: png, mimeType: "image/png" },
      { type: "text", text: "x" },
    ]);
    expect(out.changes.map((r) => [r.path, r.action])).toEqual([
      ["messages[1].content.resource", "unwrap-blob"],
      ["messages[2].content[0]", "fill-mime"],
    ]);
  });
});

describe("resources/list and resources/templates/list", () => {
  it("fills a missing or generic mimeType from the extension, and nothing else", () => {
    const result = {
      resources: [
        { uri: "file:///a.md", name: "a" },
        { uri: "file:///b.json", name: "b", mimeType: "application/octet-stream" },
        { uri: "file:///c.png", name: "c", mimeType: "text/plain" },
        { uri: "file:///noext", name: "d" },
        { uri: "file:///e.txt?x=1#y", name: "e" },
      ],
      nextCursor: "n",
    };
    const out = normalizeResult("resources/list", result, policy);
    const value = out.value as typeof result;
    expect(value.resources.map((r) => r.mimeType)).toEqual([
      "text/markdown",
      "application/json",
      "text/plain",
      undefined,
      "text/plain",
    ]);
    expect(value.resources[2]).toBe(result.resources[2]);
    expect(value.nextCursor).toBe("n");
    expect(out.changes.map((r) => [r.path, r.action])).toEqual([
      ["resources[0]", "fill-mime"],
      ["resources[1]", "fix-mime"],
      ["resources[4]", "fill-mime"],
    ]);
    for (const r of out.changes) {
      const index = Number(/\d+/.exec(r.path)![0]);
      expect(r.bytesBefore).toBe(bytes(result.resources[index]));
      expect(r.bytesAfter).toBe(bytes(value.resources[index]));
    }
  });

  it("uses uriTemplate for templates", () => {
    const result = { resourceTemplates: [{ uriTemplate: "file:///docs/{name}.md", name: "docs" }] };
    const out = normalizeResult("resources/templates/list", result, policy);
    expect((out.value as typeof result).resourceTemplates[0]).toEqual({
      uriTemplate: "file:///docs/{name}.md",
      name: "docs",
      mimeType: "text/markdown",
    });
  });
});

describe("sampling/createMessage params", () => {
  it("fixes media blocks of the messages; everything else is the same object", () => {
    const params = {
      messages: [{ role: "user", content: { type: "image", data: png, mimeType: "IMAGE/JPEG" } }],
      maxTokens: 5,
      systemPrompt: "s",
    };
    const out = normalizeRequestParams("sampling/createMessage", params, policy);
    expect((out.value as typeof params).messages[0]!.content.mimeType).toBe("image/png");
    expect(out.changes.map((r) => [r.path, r.action])).toEqual([["params.messages[0].content", "fix-mime"]]);
    expect(normalizeRequestParams("elicitation/create", params, policy).value).toBe(params);
  });
});

describe("whole messages and unknown methods", () => {
  it("passes unknown methods, non-objects and errors through as the same value", () => {
    const result = { contents: [{ uri: "file:///x.md", blob: mdBlob }] };
    expect(normalizeResult("resources/subscribe", result, policy).value).toBe(result);
    expect(normalizeResult("resources/read", null, policy).value).toBeNull();
    expect(RESULT_METHODS.has("tools/list")).toBe(false);
    const error = { jsonrpc: "2.0", id: 1, error: { code: -32000, message: "x" } };
    expect(normalizeMessage(error, policy)).toEqual({ value: error, changes: [], method: null });
  });

  it("normalizes a server→client sampling request message", () => {
    const message = {
      jsonrpc: "2.0",
      id: 3,
      method: "sampling/createMessage",
      params: {
        messages: [{ role: "user", content: { type: "audio", data: corpusFile("media/tiny.wav").toString("base64") } }],
        maxTokens: 1,
      },
    };
    const out = normalizeMessage(message, policy);
    expect(out.method).toBe("sampling/createMessage");
    expect((out.value as typeof message).params.messages[0]!.content).toMatchObject({ mimeType: "audio/wav" });
  });

  it("uses the method it is given over the inferred one", () => {
    const result = { contents: [{ uri: "file:///x.md", blob: mdBlob }] };
    expect(normalizeMessage(result, policy, "tools/call").changes).toEqual([]);
    expect(normalizeMessage(result, policy).changes.map((r) => r.action)).toEqual(["unwrap-blob"]);
  });
});

describe("7-bit charsets that switch sets with escapes (ISO-2022-JP, UTF-7)", () => {
  it("are not taken for UTF-8: decoded exactly or left as they are, their label kept", () => {
    const policy = testPolicy();
    const iso2022 = Buffer.from("1b2442243324732442244124241b2842", "hex"); // こんにちは, as a mail would carry it
    for (const [charset, bytes] of [
      ["ISO-2022-JP", iso2022],
      ["utf-7", Buffer.from("Hi Mom -+Jjo--!")],
    ] as const) {
      const entry = { uri: "mail://1.txt", mimeType: `text/plain; charset=${charset}`, blob: bytes.toString("base64") };
      const out = normalizeResult("resources/read", { contents: [entry] }, policy);
      const [after] = (out.value as { contents: Array<Record<string, unknown>> }).contents;
      if (after?.text !== undefined) expect(Buffer.from(String(after.text)).equals(bytes)).toBe(false);
      else expect(after).toEqual(entry);
      const asText = {
        uri: "mail://1.txt",
        mimeType: `text/plain; charset=${charset}`,
        text: bytes.toString("latin1"),
      };
      const text = normalizeResult("resources/read", { contents: [asText] }, policy);
      expect((text.value as { contents: unknown[] }).contents[0]).toEqual(asText);
    }
  });

  it("a label they cannot be (bytes above 0x7f), or ASCII with no shift in it, is read as it always was", () => {
    const policy = testPolicy();
    const first = (entry: Record<string, unknown>): unknown =>
      (normalizeResult("resources/read", { contents: [entry] }, policy).value as { contents: unknown[] }).contents[0];
    const japanese = "日本語のメールです";
    const mislabelled = { uri: "m.txt", mimeType: "text/plain; charset=ISO-2022-JP" };
    expect(first({ ...mislabelled, blob: Buffer.from(japanese).toString("base64") })).toEqual({
      uri: "m.txt",
      mimeType: "text/plain",
      text: japanese,
    });
    expect(first({ ...mislabelled, text: japanese })).toEqual({ uri: "m.txt", mimeType: "text/plain", text: japanese });
    for (const charset of ["iso-2022-jp", "utf-7"])
      expect(first({ uri: "m.txt", mimeType: `text/plain; charset=${charset}`, blob: btoa("Hello, world!") })).toEqual({
        uri: "m.txt",
        mimeType: "text/plain",
        text: "Hello, world!",
      });
  });
});

describe("fixMime off", () => {
  it("leaves the declared type on a blob that is unwrapped to text", () => {
    const entry = {
      uri: "file:///a.txt",
      mimeType: "application/octet-stream",
      blob: Buffer.from("hello world!").toString("base64"),
    };
    const on = normalizeResult("resources/read", { contents: [entry] }, testPolicy());
    expect((on.value as { contents: unknown[] }).contents[0]).toMatchObject({
      mimeType: "text/plain",
      text: "hello world!",
    });
    const off = normalizeResult("resources/read", { contents: [entry] }, testPolicy({ fixMime: false }));
    expect((off.value as { contents: unknown[] }).contents[0]).toEqual({
      uri: "file:///a.txt",
      mimeType: "application/octet-stream",
      text: "hello world!",
    });
  });
});
