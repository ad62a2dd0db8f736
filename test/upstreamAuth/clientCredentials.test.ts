/**
 * Client credentials (the sidecar): `serve` gets its token from the discovered token endpoint
 * itself — no login, no token file — keeps it until it expires, asks again after, and after a
 * 401. A wrong secret is an error naming the server, never the secret; the other servers go on.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { connect, hostTransport, startServe, type Connected, type ServeProcess } from "../helpers/proxyProcess.js";
import { startOAuthUpstream, writeConfig, type OAuthUpstream } from "./helpers.js";
import { tempDir } from "../helpers/tempDir.js";

const SECRET = "svc-secret-8e41b7c2d9";
const WRONG = "wrong-secret-51aa09f3";
const text = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]?.text ?? "";
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("client credentials", () => {
  let upstream: OAuthUpstream;
  let dir: string;
  let serve: ServeProcess;
  let logFile: string;
  const seen: string[] = [];
  const open: Connected[] = [];
  const grants = async (): Promise<Array<{ ok?: boolean; resource?: string; client_id: string }>> =>
    (await upstream.log()).grants.filter((g) => g.grant_type === "client_credentials");
  const session = async (name: string): Promise<Connected> => {
    const c = await connect(hostTransport("mcp", { url: serve.url, name }));
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    upstream = await startOAuthUpstream({
      accessTtlS: 2,
      clients: [{ client_id: "svc", client_secret: SECRET, redirect_uris: [], grant_types: ["client_credentials"] }],
    });
    dir = tempDir("mcpn-oauth-cc-");
    logFile = join(dir, "log.jsonl");
    const configFile = writeConfig(dir, {
      mcpServers: {
        machine: {
          url: upstream.mcp,
          auth: {
            grant: "client_credentials",
            clientId: "svc",
            clientSecret: "${SVC_SECRET}",
            issuer: upstream.authServer,
            scopes: ["mcp:tools"],
          },
        },
        misconfigured: {
          url: upstream.mcp,
          auth: { grant: "client_credentials", clientId: "svc", clientSecret: WRONG, issuer: upstream.authServer },
        },
        plain: { command: process.execPath, args: [FIXTURE_SERVER] },
      },
      log: { file: logFile, level: "debug" },
    });
    serve = await startServe(["--config", configFile, "--log-level", "debug"], {
      SVC_SECRET: SECRET,
      MCPN_AUTH_DIR: join(dir, "auth"),
    });
  });

  afterAll(async () => {
    for (const c of open) await c.close().catch(() => {});
    await serve?.stop();
    await upstream?.stop();
  });

  it("the token comes from the token endpoint (with the resource), is reused while fresh, requested again once expired and after a 401", async () => {
    const c = await session("machine");
    expect(text(await c.client.callTool({ name: "whoami", arguments: {} }))).toBe("client svc");
    expect(text(await c.client.callTool({ name: "whoami", arguments: {} }))).toBe("client svc");
    expect(await grants()).toEqual([
      { grant_type: "client_credentials", client_id: "svc", resource: upstream.mcp, ok: true },
    ]);
    await sleep(2300);
    expect(text(await c.client.callTool({ name: "whoami", arguments: {} }))).toBe("client svc");
    expect(await grants()).toHaveLength(2);
    await upstream.revokeAccess();
    expect(text(await c.client.callTool({ name: "whoami", arguments: {} }))).toBe("client svc");
    expect(await grants()).toHaveLength(3);
    expect(existsSync(join(dir, "auth"))).toBe(false); // nothing on disk: the token lives in memory
  });

  it("a wrong secret: the host gets an error naming the server (not the secret); the other servers are served", async () => {
    const error = await connect(hostTransport("mcp", { url: serve.url, name: "misconfigured" })).then(
      async (c) => {
        await c.close();
        return "connected";
      },
      (e: Error) => e.message,
    );
    seen.push(error);
    expect(error).toMatch(/upstream "misconfigured": no client-credentials token from its authorization server/);
    expect((await grants()).at(-1)).toMatchObject({ client_id: "svc", ok: false });
    const plain = await session("plain");
    expect((await plain.client.listResources()).resources.length).toBeGreaterThan(0);
    expect(text(await (await session("machine")).client.callTool({ name: "whoami", arguments: {} }))).toBe(
      "client svc",
    );
  });

  it("neither secret nor token is in the logs (debug), /healthz, /metrics or the host's errors", async () => {
    for (const path of ["/healthz", "/metrics"]) seen.push(await (await fetch(`${serve.url}${path}`)).text());
    for (const c of open.splice(0)) await c.close().catch(() => {});
    await serve.stop();
    seen.push(serve.stderr(), readFileSync(logFile, "utf8"));
    const everything = seen.join("\n");
    expect(everything).toContain("OAuth client-credentials token obtained");
    for (const secret of [SECRET, WRONG, ...(await upstream.log()).secrets])
      expect(everything.includes(secret), `${secret.slice(0, 6)}… leaked`).toBe(false);
  });
});
