/**
 * Bad input from either side, as data shared by the stdio and /mcp
 * tests: what the upstream (test/fixtures/servers/raw-upstream.mjs) writes, and what the host must
 * get back. Every upstream case is a `resources/read` whose `_emit` carries the raw bytes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { RAW_UPSTREAM } from "../reliability/helpers.js";
import { tempDir } from "../helpers/tempDir.js";

/** Small enough that the tests can go over it cheaply. */
export const MAX_MESSAGE_BYTES = 1_000_000;

/** A config file: the raw upstream as `raw`, `limits.maxMessageBytes` small. Returns its path. */
export function rawUpstreamConfig(extra: Record<string, unknown> = {}): string {
  const dir = tempDir("mcpn-bad-");
  const file = join(dir, "proxy.config.json");
  const config = {
    mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
    limits: { maxMessageBytes: MAX_MESSAGE_BYTES },
    ...extra,
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

type Answer = Record<string, unknown>;

export interface UpstreamCase {
  readonly name: string;
  /** Bytes the upstream writes on its stdout (`"__ID__"` becomes the request's id). */
  readonly emit: Buffer;
  /** No well-formed answer after `emit`: the emitted bytes must answer on their own. */
  readonly noFinal?: boolean;
  /** Request id to use (default: the case name). */
  readonly id?: string;
  /** Characters every `"__PAD__"` in `emit` stands for (a line over the limit from a small request). */
  readonly pad?: number;
  /** The log line the proxy writes about it (stderr). */
  readonly log?: RegExp;
  check(answer: Answer): void;
}

const line = (text: string): Buffer => Buffer.from(`${text}\n`);
const answerWith = (result: string): Buffer => line(`{"jsonrpc":"2.0","id":"__ID__","result":${result}}`);
const emptyContents = (answer: Answer): void => expect(answer.result).toEqual({ contents: [] });
const tooLarge = (answer: Answer): void =>
  expect(answer.error).toMatchObject({ code: -32003, message: expect.stringMatching(/over limits\.maxMessageBytes/) });
const deep = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
/** An id long enough that 1,100 copies of it make a line over MAX_MESSAGE_BYTES while the request stays small (and short enough to be read from the line's head). */
const LONG_ID = "L".repeat(1000);

export const UPSTREAM_CASES: readonly UpstreamCase[] = [
  {
    name: "malformed JSON",
    emit: line('{"jsonrpc":"2.0","id":"__ID__","result":{'),
    log: /"kind":"invalid-json".*upstream sent a message that could not be read/,
    check: emptyContents,
  },
  {
    name: "JSON that is not JSON-RPC",
    emit: line('{"foo":1}'),
    log: /"excerpt":"\{\\"foo\\":1\}".*upstream sent JSON that is not a JSON-RPC message/,
    check: emptyContents,
  },
  {
    name: "a bare number",
    emit: line("42"),
    log: /"kind":"not-jsonrpc".*upstream sent a message that could not be read/,
    check: emptyContents,
  },
  {
    name: "a response to an unknown id",
    emit: line('{"jsonrpc":"2.0","id":"nobody-asked","result":{}}'),
    log: /"id":"nobody-asked".*upstream answered a request that is not waiting/,
    check: emptyContents,
  },
  {
    name: "a second answer to the same id",
    emit: answerWith('{"contents":[{"uri":"x","text":"first"}]}'),
    log: /upstream answered a request that is not waiting/,
    check: (a) => expect(a.result).toMatchObject({ contents: [{ uri: "x", text: "first" }] }),
  },
  {
    name: "an empty array",
    emit: line("[]"),
    log: /upstream sent an empty array; not forwarded/,
    check: emptyContents,
  },
  {
    name: "a batch of responses",
    emit: line('[{"jsonrpc":"2.0","id":"__ID__","result":{"contents":[{"uri":"x","text":"in a batch"}]}}]'),
    noFinal: true,
    check: (a) => expect(a.result).toMatchObject({ contents: [{ uri: "x", text: "in a batch" }] }),
  },
  {
    name: "a message over limits.maxMessageBytes",
    id: LONG_ID,
    emit: line(`{"jsonrpc":"2.0","id":"__ID__","result":{"a":[${Array(1100).fill('"__ID__"').join(",")}]}}`),
    log: /"kind":"too-large".*upstream sent a message that could not be read/,
    check: (a) => {
      expect(a.error).toMatchObject({ code: -32003 });
      expect((a.error as { message: string }).message).toMatch(/over limits\.maxMessageBytes/);
    },
  },
  {
    // Its id equals the waiting request's (the server's ids are its own): only an answer's is ours.
    name: "a request of the server's own over limits.maxMessageBytes, its method after its params",
    id: "M".repeat(LONG_ID.length),
    emit: line(
      `{"jsonrpc":"2.0","id":"__ID__","params":{"a":[${Array(1100).fill('"__ID__"').join(",")}]},"method":"x"}`,
    ),
    log: /"kind":"too-large".*upstream sent a message that could not be read/,
    // The real answer that follows reaches the host; the request was not taken for it.
    check: emptyContents,
  },
  {
    // Brackets in a string are not nested values: its start still shows the result.
    name: "an answer over limits.maxMessageBytes whose id holds brackets",
    id: 'call[1]{"n":2}',
    pad: MAX_MESSAGE_BYTES,
    emit: line('{"jsonrpc":"2.0","id":"__ID__","result":{"pad":"__PAD__"}}'),
    noFinal: true,
    log: /"kind":"too-large".*upstream sent a message that could not be read/,
    check: tooLarge,
  },
  {
    // Keys sorted (Go's maps, Python's sort_keys): the id is read from the end, before "jsonrpc".
    name: "an answer over limits.maxMessageBytes with its keys sorted",
    pad: MAX_MESSAGE_BYTES,
    emit: line('{"error":{"code":-32000,"message":"x","data":"__PAD__"},"id":"__ID__","jsonrpc":"2.0"}'),
    noFinal: true,
    log: /"kind":"too-large".*upstream sent a message that could not be read/,
    check: tooLarge,
  },
  {
    name: "100k nested arrays",
    emit: answerWith(`{"contents":${deep(100_000)},"n":1.10}`),
    noFinal: true,
    // Forwarded as written, however deep (written again, it would lose what JSON.parse cannot carry).
    check: (a) => {
      let value = (a.result as Answer).contents;
      let depth = 0;
      for (; Array.isArray(value) && value.length === 1; depth++) value = value[0];
      expect(depth).toBe(100_000 - 1);
      expect(value).toEqual([]);
    },
  },
  {
    name: "invalid UTF-8 on the wire",
    emit: Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":"__ID__","result":{"contents":[{"uri":"x","text":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}]}}\n'),
    ]),
    noFinal: true,
    log: /"kind":"invalid-json".*upstream sent a message that could not be read/,
    // Its id is readable at its start: the request is answered at once, not at its timeout.
    check: (a) =>
      expect(a.error).toMatchObject({
        code: -32603,
        message: expect.stringMatching(/could not be read: it is not UTF-8/),
      }),
  },
  {
    name: "invalid base64 in a blob",
    emit: answerWith('{"contents":[{"uri":"x","mimeType":"image/png","blob":"!!not base64"}]}'),
    noFinal: true,
    check: (a) => expect(a.result).toEqual({ contents: [{ uri: "x", mimeType: "image/png", blob: "!!not base64" }] }),
  },
  {
    name: "lone surrogates in text",
    emit: answerWith('{"contents":[{"uri":"x","mimeType":"text/plain","text":"a\\ud800b\\udc00"}]}'),
    noFinal: true,
    check: (a) =>
      expect(a.result).toEqual({ contents: [{ uri: "x", mimeType: "text/plain", text: "a\ud800b\udc00" }] }),
  },
  {
    name: "contents that is a string",
    emit: answerWith('{"contents":"oops"}'),
    noFinal: true,
    check: (a) => expect(a.result).toEqual({ contents: "oops" }),
  },
  {
    name: "contents that is an object",
    emit: answerWith('{"contents":{"uri":"x","text":"t"}}'),
    noFinal: true,
    check: (a) => expect(a.result).toEqual({ contents: { uri: "x", text: "t" } }),
  },
  {
    name: "contents with null and numbers",
    emit: answerWith('{"contents":[null,1,"s",[]]}'),
    noFinal: true,
    check: (a) => expect(a.result).toEqual({ contents: [null, 1, "s", []] }),
  },
];

export function upstreamRequest(c: UpstreamCase): { id: string; params: Record<string, unknown> } {
  return {
    id: c.id ?? c.name,
    params: {
      _emit: [c.emit.toString("base64")],
      ...(c.noFinal === true ? { _noFinal: true } : {}),
      ...(c.pad === undefined ? {} : { _pad: c.pad }),
    },
  };
}
