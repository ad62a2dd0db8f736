/**
 * The official everything, filesystem and memory servers (npm devDependencies), pasted in as
 * a desktop host's `mcpServers` block, through every host transport — stdio (`--config FILE
 * --server NAME`), streamable HTTP, SSE and WebSocket (`serve --config FILE`) — with a real SDK
 * host. Every step's result equals the server's own (called directly, without the proxy)
 * except in the fields the proxy owns (OWNED_FIELDS in realServers.ts), and those differ only
 * where normalization is expected to act, with the same content.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  connect,
  HOST_KINDS,
  hostTransport,
  startServe,
  type Connected,
  type ServeProcess,
} from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";
import { EVERYTHING_SERVER } from "../helpers/paths.js";
import { runCli } from "../helpers/runCli.js";
import { compareResults, realServers, runSteps, type RealServer, type StepOutcome } from "./realServers.js";

/** Steps whose results the proxy is expected to rewrite (text sent as a base64 blob, a text file sent as a generic blob). */
const NORMALIZED_STEPS: Record<string, string[]> = {
  everything: ["read dynamic blob (text in base64)", "resource-prompt", "get-resource-reference blob"],
  filesystem: ["read_media_file markdown (a text file as a generic blob)", "read_media_file json"],
  memory: [],
};

const dir = tempDir("mcpn-real-");
const servers = realServers(dir);
const configFile = join(dir, "claude_desktop_config.json");
// A desktop host's file as it is: nothing but mcpServers, each entry command/args/env.
writeFileSync(
  configFile,
  JSON.stringify({ mcpServers: Object.fromEntries(servers.map((s) => [s.name, s.entry])) }, null, 2),
);

/** A host as desktop hosts are: it offers roots (the filesystem server asks for them). */
async function host(transport: ConstructorParameters<typeof Object>[0]): Promise<Connected> {
  const connected = await connect(transport as never, { capabilities: { roots: { listChanged: true } } });
  connected.client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: `file://${join(dir, "docs")}`, name: "docs" }],
  }));
  return connected;
}

describe("real servers from npm, through every host transport, against the servers themselves", () => {
  let serve: ServeProcess;
  const direct = new Map<string, StepOutcome[]>();

  beforeAll(async () => {
    for (const server of servers) {
      const connected = await host(
        new StdioClientTransport({
          command: server.entry.command,
          args: server.entry.args,
          ...(server.entry.env === undefined
            ? {}
            : { env: { ...process.env, ...server.entry.env } as Record<string, string> }),
          stderr: "pipe",
        }),
      );
      try {
        direct.set(server.name, await runSteps(connected.client, server.steps));
      } finally {
        await connected.close();
      }
    }
    serve = await startServe(["--config", configFile]);
  }, 120_000);

  afterAll(async () => {
    await serve?.stop();
  });

  it("the servers answered the script directly (what the proxy is compared with)", () => {
    const everything = direct.get("everything")!;
    expect(everything.filter((o) => o.error !== undefined).map((o) => o.label)).toEqual([]);
    expect(everything.find((o) => o.label === "unknown tool")!.result).toMatchObject({ isError: true });
    expect(everything.find((o) => o.label === "long-running operation with progress")!.progress).toBeGreaterThan(0);
    expect(direct.get("memory")!.every((o) => o.error === undefined)).toBe(true);
    const filesystem = direct.get("filesystem")!;
    expect(filesystem.find((o) => o.label === "read_text_file")!.result).toMatchObject({
      content: [{ type: "text", text: "# Notes\n\nGrüße aus dem Test.\n" }],
    });
  });

  for (const kind of HOST_KINDS) {
    for (const server of servers) {
      it(`${server.name} over ${kind}: every result as the server's own, but for the fields the proxy owns`, async () => {
        const transport =
          kind === "stdio"
            ? hostTransport("stdio", { stdioArgs: ["--config", configFile, "--server", server.name] })
            : hostTransport(kind, { url: serve.url, name: server.name });
        const connected = await host(transport);
        let proxied: StepOutcome[];
        try {
          proxied = await runSteps(connected.client, server.steps);
        } finally {
          await connected.close();
        }
        expectSameAsDirect(server, direct.get(server.name)!, proxied);
      });
    }
  }

  it("input piped into stdio in front of the everything server is answered, then it exits 0", async () => {
    const messages = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sh", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "demo://resource/dynamic/blob/1" } },
    ];
    const run = await runCli(["stdio", "--", process.execPath, EVERYTHING_SERVER, "stdio"], {
      input: messages.map((m) => `${JSON.stringify(m)}\n`).join(""),
    });
    expect(run.code, run.stderr).toBe(0);
    const answers = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id?: number; result?: Record<string, unknown> });
    expect(answers.filter((a) => a.id !== undefined).map((a) => a.id)).toEqual([1, 2, 3]);
    expect(answers.find((a) => a.id === 3)!.result).toMatchObject({
      contents: [
        { uri: "demo://resource/dynamic/blob/1", mimeType: "text/plain", text: expect.stringMatching(/^Resource 1: /) },
      ],
    });
  });
});

function expectSameAsDirect(server: RealServer, direct: StepOutcome[], proxied: StepOutcome[]): void {
  expect(proxied.map((o) => o.label)).toEqual(direct.map((o) => o.label));
  const normalizedSteps: string[] = [];
  for (let i = 0; i < direct.length; i++) {
    const d = direct[i]!;
    const p = proxied[i]!;
    expect({ step: d.label, error: p.error }).toEqual({ step: d.label, error: d.error });
    // The SDK's client hands notifications to handlers a tick later and drops the progress of a
    // request already answered, so how many arrive in time varies: some must, on both sides.
    expect(p.progress > 0, `${server.name} ${d.label}: progress`).toBe(d.progress > 0);
    if (d.error !== undefined) continue;
    const { foreign, owned } = compareResults(d.result, p.result, server.volatile);
    expect(foreign, `${server.name} ${d.label}: differences outside the proxy's fields`).toEqual([]);
    if (owned.length > 0) normalizedSteps.push(d.label);
  }
  expect(normalizedSteps).toEqual(NORMALIZED_STEPS[server.name]);
}
