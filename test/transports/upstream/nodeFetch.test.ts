/**
 * The node:http requests of HTTP upstreams answer what the transports ask of `fetch` the same
 * way: status, headers, a body read as it arrives, keep-alive reuse (as many idle connections
 * kept as asked), aborts, and network errors in fetch's shape (redirects: redirects.test.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { readAll } from "./bodyText.js";
import { nodeFetch, nodeFetchWith } from "../../../src/transports/upstream/nodeFetch.js";
import { PostAbort } from "../../../src/transports/upstream/postAbort.js";
import { networkErrorText } from "../../../src/transports/upstream/upstreamMessages.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    handler(req, res, Buffer.concat(parts).toString("utf8"));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** `promise`, or a failure when it has not settled within two seconds (a missed abort fails fast). */
function within<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error("not settled within 2 s")), 2000).unref()),
  ]);
}

/** Waits until `check()` holds (polled), failing after two seconds. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met within 2 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("nodeFetch", () => {
  it("sends method, headers and body; reads status, headers and a streamed body; reuses the connection", async () => {
    const ports: number[] = [];
    const base = await serve((req, res, body) => {
      ports.push(req.socket.remotePort!);
      res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s1" });
      res.write(
        `data: ${JSON.stringify({ method: req.method, session: req.headers["mcp-session-id"], agent: req.headers["user-agent"], body })}\n\n`,
      );
      setTimeout(() => res.end("data: end\n\n"), 20);
    });
    for (let i = 0; i < 2; i++) {
      const response = await nodeFetch(`${base}/mcp`, {
        method: "POST",
        headers: new Headers({ "mcp-session-id": "abc", "content-type": "application/json" }),
        body: '{"x":1}',
      });
      expect(response.ok).toBe(true);
      expect(response.status).toBe(200);
      expect(response.headers.get("Mcp-Session-Id")).toBe("s1");
      expect(response.headers.get("x-missing")).toBeNull();
      expect(await readAll(response)).toBe(
        `data: {"method":"POST","session":"abc","agent":"node","body":"{\\"x\\":1}"}\n\ndata: end\n\n`,
      );
    }
    expect(ports[1]).toBe(ports[0]);
  });

  it("a plain header object is sent as a Headers object built from it would be; a URL object keeps its path and query", async () => {
    const seen: Array<{ url: string | undefined; headers: IncomingMessage["headers"] }> = [];
    const base = await serve((req, res) => {
      seen.push({ url: req.url, headers: req.headers });
      res.writeHead(204).end();
    });
    const url = new URL(`${base}/mcp/one?x=1&y=%20`);
    const plain = {
      "Mcp-Session-Id": "abc",
      "X-Twice": "a",
      "x-twice": "b",
      Accept: "text/event-stream",
      // A token read from a file or an environment variable often ends in a newline.
      Authorization: " Bearer t0ken\n",
      Constructor: "c",
    };
    for (const headers of [plain, new Headers(plain)]) {
      const response = await nodeFetch(url, { method: "POST", headers, body: "{}" });
      expect(response.status).toBe(204);
    }
    await nodeFetch(new URL(`${base}/other`), { method: "POST", headers: {}, body: "{}" });
    // The same URL object, changed since its first request, goes where it now points.
    url.pathname = "/mcp/two";
    await nodeFetch(url, { method: "POST", headers: {}, body: "{}" });
    expect(seen.map((s) => s.url)).toEqual([
      "/mcp/one?x=1&y=%20",
      "/mcp/one?x=1&y=%20",
      "/other",
      "/mcp/two?x=1&y=%20",
    ]);
    for (const { headers } of seen.slice(0, 2)) {
      expect(headers["mcp-session-id"]).toBe("abc");
      expect(headers["x-twice"]).toBe("a, b");
      expect(headers.accept).toBe("text/event-stream");
      expect(headers.authorization).toBe("Bearer t0ken");
      expect(headers.constructor).toBe("c");
      expect(headers["content-length"]).toBe("2");
    }
    expect(seen[2]!.headers.accept).toBe("*/*");
  });

  it("an empty 202 cancelled leaves its keep-alive connection for the next request", async () => {
    const ports: number[] = [];
    const base = await serve((req, res) => {
      ports.push(req.socket.remotePort!);
      res.writeHead(202).end();
    });
    for (let i = 0; i < 3; i++) {
      const response = await nodeFetch(base, { method: "POST", body: "{}" });
      expect(response.status).toBe(202);
      await response.body?.cancel();
    }
    expect(new Set(ports).size).toBe(1);
  });

  it("a GET (an event stream) takes a connection of its own, never the warm one the next POST reuses", async () => {
    const ports: Array<[string, number]> = [];
    const base = await serve((req, res) => {
      ports.push([req.method!, req.socket.remotePort!]);
      if (req.method === "GET") res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n");
      else res.writeHead(202).end();
    });
    const first = await nodeFetch(base, { method: "POST", body: "{}" });
    await first.body?.cancel();
    // Sent at once after the cancel, both of them: the stream must not take the POST's connection.
    const stream = await nodeFetch(base, { method: "GET" });
    const second = await nodeFetch(base, { method: "POST", body: "{}" });
    await second.body?.cancel();
    await stream.body?.cancel();
    expect(ports.map(([method]) => method)).toEqual(["POST", "GET", "POST"]);
    const [postPort, getPort, againPort] = ports.map(([, port]) => port);
    expect(againPort).toBe(postPort);
    expect(getPort).not.toBe(postPort);
  });

  it.each([
    { idle: 400, newConnections: 0 },
    { idle: 20, newConnections: 280 },
  ])(
    "a burst of 300 requests freed at once keeps $idle idle connections for the next burst",
    async ({ idle, newConnections }) => {
      // More than Node's agent default of 256 kept: a burst of sessions frees this many at once.
      const sockets = new Set<unknown>();
      const held: Array<() => void> = [];
      const base = await serve((req, res) => {
        sockets.add(req.socket);
        held.push(() => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
        // Answer only once every request of the burst is in flight, so all 300 are open together.
        if (held.length === 300) for (const answer of held.splice(0)) answer();
      });
      const fetchWith = nodeFetchWith(idle);
      const burst = (): Promise<unknown> =>
        Promise.all(
          Array.from({ length: 300 }, () =>
            fetchWith(base, { method: "POST", body: "{}" }).then((response) => readAll(response)),
          ),
        );
      await burst();
      expect(sockets.size).toBe(300);
      // The freed connections are back in the pool (or closed) once their answers were read.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await burst();
      expect(sockets.size - 300).toBe(newConnections);
    },
    20_000,
  );

  const abortKinds = [
    { kind: "an AbortController", make: () => new AbortController(), signalOf: (c: AbortController) => c.signal },
    { kind: "a PostAbort", make: () => new PostAbort(), signalOf: (c: PostAbort) => c },
  ] as const;

  for (const { kind, make, signalOf } of abortKinds) {
    it(`an abort (${kind}) rejects a request waiting for its answer, or before it is sent, and a body being read, with the abort reason`, async () => {
      const held: ServerResponse[] = [];
      const base = await serve((req, res) => {
        if (req.url === "/silent") {
          held.push(res);
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: first\n\n");
      });
      const controller = make() as AbortController & PostAbort;
      const response = await nodeFetch(base, { signal: signalOf(controller) });
      const reader = response.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      const pending = reader.read();
      controller.abort(new Error("closing"));
      await expect(within(pending)).rejects.toThrow("closing");

      const waiting = make() as AbortController & PostAbort;
      const headersAwaited = nodeFetch(`${base}/silent`, { method: "POST", body: "{}", signal: signalOf(waiting) });
      await until(() => held.length === 1);
      waiting.abort(new Error("cancelled"));
      await expect(within(headersAwaited)).rejects.toThrow("cancelled");
      // The connection is gone with the request: the server sees it close.
      await within(new Promise((resolve) => held[0]!.once("close", resolve)));

      const early = make() as AbortController & PostAbort;
      early.abort(new Error("never sent"));
      await expect(nodeFetch(base, { signal: signalOf(early) })).rejects.toThrow("never sent");
    });

    it(`an abort (${kind}) after the answer was read leaves the kept-alive connection to the next request`, async () => {
      const ports: number[] = [];
      const base = await serve((req, res) => {
        ports.push(req.socket.remotePort!);
        if (req.url === "/slow") {
          res.writeHead(200, { "content-type": "application/json" });
          setTimeout(() => res.end('{"late":true}'), 100);
        } else res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      });
      const controller = make() as AbortController & PostAbort;
      const first = await nodeFetch(base, { method: "POST", body: "{}", signal: signalOf(controller) });
      expect(await readAll(first)).toBe('{"ok":true}');
      const second = await nodeFetch(`${base}/slow`, { method: "POST", body: "{}" });
      controller.abort(new Error("too late"));
      expect(await within(readAll(second))).toBe('{"late":true}');
      expect(ports[1]).toBe(ports[0]);
    });
  }

  it("a refused connection fails in fetch's shape (the system error as its cause)", async () => {
    const base = await serve(() => {});
    const port = new URL(base).port;
    servers[0]!.close();
    await new Promise((r) => setTimeout(r, 50));
    const error = await nodeFetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", body: "{}" }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(networkErrorText(error)).toMatch(/^fetch failed: ECONNREFUSED/);
  });

  it("a URL with credentials is refused as fetch refuses it", async () => {
    await expect(nodeFetch("http://user:secret@127.0.0.1:1/mcp")).rejects.toThrow(/credentials/);
  });

  it("a body cut short fails the read", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("partial");
      setTimeout(() => res.destroy(), 20);
    });
    const response = await nodeFetch(base);
    await expect(readAll(response)).rejects.toThrow();
  });

  it("a body the server compressed though it was not asked to (gzip, deflate, br) is decoded, also when streamed", async () => {
    const text = `${"é mcp ".repeat(2000)}end`;
    const encoders = { gzip: gzipSync, "x-gzip": gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;
    const base = await serve((req, res) => {
      const coding = req.url!.slice(1) as keyof typeof encoders;
      const body = encoders[coding](Buffer.from(text));
      res.writeHead(200, { "content-encoding": coding, "content-type": "text/event-stream" });
      // In pieces, the last one later: the decoder's output comes as the bytes do.
      res.write(body.subarray(0, 10));
      setTimeout(() => res.end(body.subarray(10)), 20);
    });
    for (const coding of Object.keys(encoders)) {
      const response = await nodeFetch(`${base}/${coding}`, { headers: {} });
      expect(await within(readAll(response)), coding).toBe(text);
    }
    // Keep-alive connections still serve the next request.
    expect(await within(readAll(await nodeFetch(`${base}/gzip`)))).toBe(text);
  });

  it("a deflate body sent raw (no zlib header, as many servers send it) is decoded as fetch decodes it", async () => {
    const text = `${"raw deflate ".repeat(500)}end`;
    const base = await serve((req, res) => {
      if (req.url === "/empty") return res.writeHead(200, { "content-encoding": "deflate" }).end();
      if (req.url === "/stacked")
        return res
          .writeHead(200, { "content-encoding": "deflate, gzip" })
          .end(gzipSync(deflateRawSync(Buffer.from(text))));
      const body = deflateRawSync(Buffer.from(text));
      res.writeHead(200, { "content-encoding": "deflate" });
      // The first byte alone, the rest later: the choice waits for it and loses nothing.
      res.write(body.subarray(0, 1));
      setTimeout(() => res.end(body.subarray(1)), 20);
    });
    for (const [path, expected] of [
      ["/raw", text],
      ["/empty", ""],
      ["/stacked", text],
    ] as const) {
      const response = await nodeFetch(`${base}${path}`);
      expect(await within(readAll(response)), path).toBe(expected);
    }
    // A raw body that does not decode fails as a zlib one does, naming the coding.
    const garbage = await serve((_req, res) => res.writeHead(200, { "content-encoding": "deflate" }).end("\xff\xff"));
    await expect(within(readAll(await nodeFetch(garbage)))).rejects.toThrow(
      /the upstream's deflate body does not decode/,
    );
  });

  it("a compressed body that does not decode, or a coding that cannot be decoded, fails the read naming it", async () => {
    const base = await serve((req, res) => {
      if (req.url === "/zstd") return res.writeHead(200, { "content-encoding": "zstd" }).end("(zstd bytes)");
      res.writeHead(200, { "content-encoding": "gzip" }).end("not gzip at all");
    });
    await expect(within(readAll(await nodeFetch(`${base}/garbage`)))).rejects.toThrow(
      /the upstream's gzip body does not decode: incorrect header check/,
    );
    const zstd = await nodeFetch(`${base}/zstd`);
    await expect(within(readAll(zstd))).rejects.toThrow(/fetch failed/);
    const why = await readAll(zstd).catch((error: unknown) => networkErrorText(error));
    expect(why).toMatch(/Content-Encoding "zstd", which cannot be decoded/);
  });

  it("decodes as fetch does: a body cut before its trailer gives what it held, an empty one is empty, codings stack", async () => {
    const whole = gzipSync(Buffer.from("a whole answer"));
    const base = await serve((req, res) => {
      if (req.url === "/cut") return res.writeHead(200, { "content-encoding": "gzip" }).end(whole.subarray(0, -8));
      if (req.url === "/empty") return res.writeHead(200, { "content-encoding": "gzip" }).end();
      res.writeHead(200, { "content-encoding": "gzip, br" }).end(brotliCompressSync(whole));
    });
    for (const [path, text] of [
      ["/cut", "a whole answer"],
      ["/empty", ""],
      ["/stacked", "a whole answer"],
    ] as const) {
      const response = await nodeFetch(`${base}${path}`);
      expect(await within(readAll(response)), path).toBe(text);
    }
  });

  it("a decoded body cancelled before it is read, or part-way, settles and leaves the connection to the next request", async () => {
    const small = gzipSync(Buffer.from("small"));
    const big = gzipSync(Buffer.from("x".repeat(5_000_000)));
    const base = await serve((req, res) => {
      if (req.url === "/empty202") return res.writeHead(202, { "content-encoding": "gzip" }).end();
      res.writeHead(200, { "content-encoding": "gzip" }).end(req.url === "/big" ? big : small);
    });
    for (const path of ["/small", "/empty202"]) {
      const response = await nodeFetch(`${base}${path}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await within(response.body!.cancel());
    }
    const partial = await nodeFetch(`${base}/big`);
    await partial.body!.getReader().read();
    await within(partial.body!.cancel());
    expect(await within(readAll(await nodeFetch(`${base}/small`)))).toBe("small");
  });
});
