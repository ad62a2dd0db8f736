#!/usr/bin/env node
/**
 * The floor under any proxy of an HTTP transport, as `relay.mjs` is for stdio: a process that
 * takes a host's messages over streamable HTTP (`/mcp`), legacy SSE (`/sse`) or WebSocket
 * (`/ws`) and relays their bytes to a stdio child, one child per host session, parsing nothing.
 * Each line the child writes goes back as it is: over `/mcp` as the reply to the oldest request
 * still waiting (the suite has one call in flight), over `/sse` as a `message` event, over `/ws`
 * as a text frame. A POST with no `"id"` is a notification: 202. What it costs is the extra
 * process, the transport's own framing and the two hops; a real proxy can only add to it.
 *
 *   node bench/transportRelay.mjs [--port N] -- CMD ARGS…
 *
 * Not a product: no limits, no auth, no server→host requests over `/mcp`.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { WebSocketServer } from "ws";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const portFlag = argv.indexOf("--port");
const port = portFlag >= 0 && portFlag < dash ? Number(argv[portFlag + 1]) : 0;
const [command, ...args] = dash >= 0 ? argv.slice(dash + 1) : [];
if (command === undefined) {
  process.stderr.write("usage: node bench/transportRelay.mjs [--port N] -- CMD ARGS…\n");
  process.exit(2);
}

const children = new Set();

/** A child per session; `onLine` gets each line it writes (a message), without its newline. */
function startChild(onLine) {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  children.add(child);
  child.on("exit", () => children.delete(child));
  child.stdout.setEncoding("utf8");
  let partial = "";
  child.stdout.on("data", (chunk) => {
    // Only the new chunk is searched: a 10 MiB line must not be rescanned at every chunk.
    let start = 0;
    let end = chunk.indexOf("\n");
    while (end >= 0) {
      onLine(start === 0 ? partial + chunk.slice(0, end) : chunk.slice(start, end));
      start = end + 1;
      end = chunk.indexOf("\n", start);
    }
    partial = start === 0 ? partial + chunk : chunk.slice(start);
  });
  child.on("error", (error) => process.stderr.write(`transportRelay: ${error.message}\n`));
  return child;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

/** `/mcp`: the session is the `mcp-session-id` the first POST is given. */
const mcpSessions = new Map();

async function streamable(req, res) {
  if (req.method === "GET") return void res.writeHead(405, { allow: "POST, DELETE" }).end();
  const id = req.headers["mcp-session-id"];
  if (req.method === "DELETE") {
    mcpSessions.get(id)?.child.kill();
    mcpSessions.delete(id);
    return void res.writeHead(200).end();
  }
  const body = await readBody(req);
  let session = mcpSessions.get(id);
  const headers = { "content-type": "application/json" };
  if (session === undefined) {
    const waiting = [];
    const sessionId = randomUUID();
    const child = startChild((line) => {
      const reply = waiting.shift();
      reply?.writeHead(200, { ...headers, "mcp-session-id": sessionId, "content-length": Buffer.byteLength(line) });
      reply?.end(line);
    });
    session = { child, waiting };
    mcpSessions.set(sessionId, session);
  }
  if (!body.includes('"id"')) res.writeHead(202).end();
  else session.waiting.push(res);
  session.child.stdin.write(`${body}\n`);
}

/** `/sse`: the stream announces where to POST; the child's lines are its `message` events. */
const sseSessions = new Map();

function sseStream(res) {
  const sessionId = randomUUID();
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.write(`event: endpoint\ndata: /messages?sessionId=${sessionId}\n\n`);
  const child = startChild((line) => res.write(`event: message\ndata: ${line}\n\n`));
  sseSessions.set(sessionId, child);
  res.on("close", () => {
    child.kill();
    sseSessions.delete(sessionId);
  });
}

async function ssePost(req, res, sessionId) {
  const child = sseSessions.get(sessionId);
  const body = await readBody(req);
  if (child === undefined) return void res.writeHead(404).end();
  child.stdin.write(`${body}\n`);
  res.writeHead(202).end("Accepted");
}

const server = createServer((req, res) => {
  const url = new URL(req.url, "http://relay");
  if (url.pathname === "/mcp") return void streamable(req, res);
  if (url.pathname === "/sse" && req.method === "GET") return sseStream(res);
  if (url.pathname === "/messages" && req.method === "POST")
    return void ssePost(req, res, url.searchParams.get("sessionId"));
  res.writeHead(404).end();
});

const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
server.on("upgrade", (req, socket, head) => {
  if (new URL(req.url, "http://relay").pathname !== "/ws") return void socket.destroy();
  wss.handleUpgrade(req, socket, head, (ws) => {
    const child = startChild((line) => ws.send(line));
    ws.on("message", (data) => child.stdin.write(`${data}\n`));
    ws.on("close", () => child.kill());
  });
});

server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`transportRelay listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const signal of ["SIGTERM", "SIGINT"])
  process.on(signal, () => {
    for (const child of children) child.kill();
    process.exit(0);
  });
