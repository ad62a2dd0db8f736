/**
 * What the proxy does not change reaches the host as the upstream wrote it, to the byte — also
 * inside a message it rewrote, and in a big message whose payloads it read as bytes: numbers
 * `JSON.parse` cannot carry (2^53 + 1, 20 digits, `-0`, `1.10`, `1e400`), key order, escapes. A
 * tool's `structuredContent` in particular, which hosts validate against its `outputSchema`.
 * The upstream (raw-upstream.mjs) writes the exact line the test gives it; the host reads the
 * proxy's stdout as raw lines.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { RAW_UPSTREAM } from "../reliability/helpers.js";

const STRUCTURED = '{"orderId":9007199254740993,"amount":1.10,"big":12345678901234567890,"z":-0,"b":1,"10":2}';
const META = '{"n":1e400,"s":"caf\\u00e9"}';

const proxy = spawn(process.execPath, [CLI, "stdio", "--", process.execPath, RAW_UPSTREAM], {
  stdio: ["pipe", "pipe", "pipe"],
});
let out = "";
let stderr = "";
proxy.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
proxy.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));

/** The line the proxy wrote answering `id` (its text, newline excluded). */
function lineFor(id: number, timeoutMs = 10_000): Promise<string> {
  const prefix = `{"jsonrpc":"2.0","id":${id},`;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const look = (): void => {
      // Complete lines only: a big one arrives in many chunks.
      const line = out
        .split("\n")
        .slice(0, -1)
        .find((l) => l.startsWith(prefix));
      if (line !== undefined) {
        resolve(line);
        return;
      }
      if (Date.now() - started > timeoutMs || proxy.exitCode !== null) {
        reject(new Error(`no answer to ${id}; stdout ${out.slice(-500)}; stderr ${stderr.slice(-1000)}`));
        return;
      }
      setTimeout(look, 10);
    };
    look();
  });
}

/** A tools/call the upstream answers with exactly `resultText` as its result (in a batch of one: `batch`). */
function callAnsweredWith(id: number, resultText: string, batch = false): Promise<string> {
  const answer = `{"jsonrpc":"2.0","id":"__ID__","result":${resultText}}`;
  const line = `${batch ? `[${answer}]` : answer}\n`;
  const params = { name: "any", arguments: {}, _emit: [Buffer.from(line).toString("base64")], _noFinal: true };
  proxy.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params })}\n`);
  return lineFor(id);
}

beforeAll(async () => {
  proxy.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
  );
  await lineFor(1);
  proxy.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
});

afterAll(async () => {
  proxy.stdin.end();
  if (proxy.exitCode === null) await new Promise((resolve) => proxy.once("exit", resolve));
});

describe("what the proxy does not change", () => {
  it("keeps its text in a result whose content the proxy rewrote (an embedded text blob unwrapped)", async () => {
    const line = await callAnsweredWith(
      2,
      '{"content":[{"type":"text","text":"a","n":1.50},' +
        '{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","blob":"aGk="}}],' +
        `"structuredContent":${STRUCTURED},"_meta":${META}}`,
    );
    expect(line).toBe(
      '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"a","n":1.50},' +
        '{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"hi"}}],' +
        `"structuredContent":${STRUCTURED},"_meta":${META}}}`,
    );
  });

  it("keeps a big untouched answer whose payload was read as bytes exactly as written", async () => {
    const result = `{"content":[{"type":"text","text":"${"x".repeat(300 * 1024)}"}],"structuredContent":${STRUCTURED}}`;
    expect(await callAnsweredWith(3, result)).toBe(`{"jsonrpc":"2.0","id":3,"result":${result}}`);
  });

  it("keeps its text in a big answer read with raw payloads whose content the proxy rewrote", async () => {
    const long = `{"type":"text","text":"${"z".repeat(300 * 1024)}","_meta":{"n":1.10}}`;
    const line = await callAnsweredWith(
      5,
      `{"content":[${long},` +
        '{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","blob":"aGk="}}],' +
        `"structuredContent":${STRUCTURED},"_meta":${META}}`,
    );
    expect(line).toBe(
      `{"jsonrpc":"2.0","id":5,"result":{"content":[${long},` +
        '{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"hi"}}],' +
        `"structuredContent":${STRUCTURED},"_meta":${META}}}`,
    );
  });

  it("keeps its text in an answer that came in a batch, small or read with raw payloads, the proxy rewrote", async () => {
    for (const [id, text] of [
      [6, "q"],
      [7, "q".repeat(300 * 1024)],
    ] as const) {
      const content =
        `{"type":"text","text":"${text}"},` +
        '{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","blob":"aGk="}}';
      const line = await callAnsweredWith(id, `{"content":[${content}],"_meta":${META}}`, true);
      expect(line).toBe(
        `{"jsonrpc":"2.0","id":${id},"result":{"content":[${content.replace('"blob":"aGk="', '"text":"hi"')}],` +
          `"_meta":${META}}}`,
      );
    }
  });

  it("keeps its text in an answer nested deeper than JSON.stringify goes, the proxy rewrote", async () => {
    const deep = `${"[".repeat(100_000)}1e400${"]".repeat(100_000)}`;
    const line = await callAnsweredWith(
      8,
      '{"content":[{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","blob":"aGk="}}],' +
        `"_meta":{"d":${deep}}}`,
    );
    expect(line).toBe(
      '{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"resource","resource":{"uri":"file:///a.txt",' +
        `"mimeType":"text/plain","text":"hi"}}],"_meta":{"d":${deep}}}}`,
    );
  });

  it("keeps an answer with a line break between its tokens, the break as a space", async () => {
    const line = await callAnsweredWith(4, `{"content":[],\r"structuredContent":${STRUCTURED}}`);
    expect(line).toBe(`{"jsonrpc":"2.0","id":4,"result":{"content":[], "structuredContent":${STRUCTURED}}}`);
  });
});
