/**
 * A body over the size limit is known by its two ends: the start tells a host's answer from its
 * own request, and shows the id. The start is the body's own first bytes even when, before the
 * limit was reached, the bodies in flight had used up `limits.bodyBytesInFlight` and what was
 * held of it had been let go. A real HTTP server and client, the body written in pieces.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BodyBudget } from "../../../src/transports/host/bodyBudget.js";
import {
  type BodyReadResult,
  isAnswerOverLimit,
  readMessageBody,
} from "../../../src/transports/host/readMessageBody.js";

const K = 1024;
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** POSTs `pieces` (a pause after each, so each comes as a chunk of its own) and resolves with what the reader made of them. */
async function readBody(pieces: string[], limit: number, budget: BodyBudget): Promise<BodyReadResult> {
  let result!: Promise<BodyReadResult>;
  server = createServer((req, res) => {
    result = readMessageBody(req, limit, { budget });
    void result.then(() => res.writeHead(413).end());
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/mcp" }, (res) => {
      res.resume();
      res.on("end", resolve);
    });
    req.on("error", reject);
    const write = async (): Promise<void> => {
      for (const piece of pieces) {
        req.write(piece);
        await new Promise((wait) => setTimeout(wait, 30));
      }
      req.end();
    };
    void write();
  });
  return result;
}

const answer = `{"jsonrpc":"2.0","id":7,"result":{"role":"assistant","content":{"type":"text","text":"${"A".repeat(30 * K)}"}}}`;
const inPieces = (text: string, size: number): string[] =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

describe("readMessageBody: a body over the limit", () => {
  it.each([
    ["with room in the budget", 0],
    ["after the bodies in flight used up the budget", 20 * K],
  ])("%s: a host's answer is known for one, under its id", async (_, held) => {
    const budget = new BodyBudget(32 * K);
    budget.take(held);
    const body = await readBody(inPieces(answer, 8 * K), 20 * K, budget);
    expect(body.ok).toBe(false);
    if (body.ok) return;
    expect(body.status).toBe(413);
    expect(body.problem).toMatchObject({ kind: "too-large", id: 7, bytes: answer.length });
    expect(body.problem.excerpt.startsWith('{"jsonrpc":"2.0","id":7,"result"')).toBe(true);
    expect(isAnswerOverLimit(body.problem)).toBe(true);
  });

  it("its end is its own last bytes, whichever piece went over the limit", async () => {
    const idLast = `{"jsonrpc":"2.0","result":{"x":"${"x".repeat(200)}"},"id":77}`;
    const body = await readBody([idLast.slice(0, -3), idLast.slice(-3)], idLast.length - 1, new BodyBudget(1024 * K));
    expect(body.ok).toBe(false);
    if (body.ok) return;
    expect(body.problem).toMatchObject({ kind: "too-large", id: 77 });
    expect(isAnswerOverLimit(body.problem)).toBe(true);
  });

  it("a body under the limit refused for the budget (503) is no answer over the limit, whatever it holds", async () => {
    const budget = new BodyBudget(32 * K);
    budget.take(30 * K);
    const body = await readBody(inPieces(answer, 8 * K), 64 * K, budget);
    expect(body.ok).toBe(false);
    if (body.ok) return;
    expect(body.status).toBe(503);
    // Not to be taken for the host's answer to a request of the upstream's: it may be a request.
    expect(isAnswerOverLimit(body.problem)).toBe(false);
  });

  it("a host's own request over the limit is no answer", async () => {
    const request = `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"${"x".repeat(30 * K)}"}}`;
    const body = await readBody(inPieces(request, 8 * K), 20 * K, new BodyBudget(1024 * K));
    expect(body.ok).toBe(false);
    if (body.ok) return;
    expect(isAnswerOverLimit(body.problem)).toBe(false);
  });
});
