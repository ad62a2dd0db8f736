/**
 * What a stdio upstream's environment holds. `serve`: the SDK's default variables (HOME, PATH…)
 * plus the server's `env`; `inheritEnv: true` (or `--inherit-env`) the rest too; never the
 * variables `auth` reads — the listener's, or a remote server's OAuth client secret — nor those
 * another server's `headers`, `url` or `env` read. `stdio` and `audit`: everything the host or shell
 * gave the proxy, less (chosen from a config) the variables the config reads for credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI } from "../helpers/paths.js";
import { connect, startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/tempDir.js";
import { FAULT_SERVER, initializedWs, serveConfig, toolText, waitForStderr } from "../reliability/helpers.js";

const PROXY_ENV = {
  MCPN_TOKEN: "listener-token-9d1",
  OTHER_SECRET: "db-password-42",
  PLAIN_SETTING: "colour=blue",
  BILLING_CLIENT_SECRET: "oauth-client-secret-7f3",
  SEARCH_API_KEY: "search-api-key-5c2",
  SEARCH_QUERY_KEY: "search-query-key-8e4",
  HOME: "/home/proxyuser",
  TERM: "xterm-test",
};
const auth = { authorization: `Bearer ${PROXY_ENV.MCPN_TOKEN}` };

async function childEnv(
  url: string,
  name: string,
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const host = await initializedWs(url, name, headers);
  const env = JSON.parse(toolText(await host.request(1, "tools/call", { name: "env" }))) as Record<string, string>;
  await host.close();
  return env;
}

describe("serve --config with auth read from ${MCPN_TOKEN}", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveConfig(
      {
        mcpServers: {
          plain: { command: process.execPath, args: [FAULT_SERVER], env: { GIVEN: "configured" } },
          all: { command: process.execPath, args: [FAULT_SERVER], env: { GIVEN: "configured" }, inheritEnv: true },
          explicit: { command: process.execPath, args: [FAULT_SERVER], env: { UPSTREAM_KEY: "${OTHER_SECRET}" } },
          // Never connected to: only the variables in its headers and URL matter.
          search: {
            url: "http://127.0.0.1:9/mcp?key=${SEARCH_QUERY_KEY}",
            // HOME and TERM are read here too: every host passes them, they stay passed.
            headers: { "X-Api-Key": "${SEARCH_API_KEY}", "X-Home": "${HOME}:${TERM}" },
          },
          // Never connected to here: only its client secret's variable matters.
          billing: {
            url: "http://127.0.0.1:9/mcp",
            auth: {
              grant: "client_credentials",
              clientId: "normalizer",
              clientSecret: "${BILLING_CLIENT_SECRET}",
              issuer: "http://127.0.0.1:9",
            },
          },
        },
        auth: { bearerTokens: ["${MCPN_TOKEN}"] },
      },
      PROXY_ENV,
    );
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it("a server gets HOME, PATH, TERM… and its own env, nothing else of the proxy's", async () => {
    const env = await childEnv(serve.url, "plain", auth);
    expect(env.GIVEN).toBe("configured");
    expect(env.HOME).toBe("/home/proxyuser");
    expect(env.TERM).toBe("xterm-test");
    expect(env.PATH).toBe(process.env.PATH);
    expect(env).not.toHaveProperty("OTHER_SECRET");
    expect(env).not.toHaveProperty("MCPN_TOKEN");
    expect(JSON.stringify(env)).not.toContain(PROXY_ENV.MCPN_TOKEN);
  });

  it("inheritEnv: true adds the rest of the environment, but never what auth reads (the listener's or an upstream's OAuth) nor another server's headers, URL or env", async () => {
    const env = await childEnv(serve.url, "all", auth);
    expect(env.PLAIN_SETTING).toBe("colour=blue");
    // `explicit` reads it into its own env: its key, not this server's.
    expect(env).not.toHaveProperty("OTHER_SECRET");
    expect(JSON.stringify(env)).not.toContain(PROXY_ENV.OTHER_SECRET);
    expect(env.GIVEN).toBe("configured");
    expect(env).not.toHaveProperty("MCPN_TOKEN");
    expect(JSON.stringify(env)).not.toContain(PROXY_ENV.MCPN_TOKEN);
    expect(env).not.toHaveProperty("BILLING_CLIENT_SECRET");
    expect(JSON.stringify(env)).not.toContain(PROXY_ENV.BILLING_CLIENT_SECRET);
    expect(env.HOME).toBe("/home/proxyuser");
    expect(env.TERM).toBe("xterm-test");
    for (const name of ["SEARCH_API_KEY", "SEARCH_QUERY_KEY"] as const) {
      expect(env).not.toHaveProperty(name);
      expect(JSON.stringify(env)).not.toContain(PROXY_ENV[name]);
    }
  });

  it("a value the config hands over explicitly in env is passed", async () => {
    const env = await childEnv(serve.url, "explicit", auth);
    expect(env.UPSTREAM_KEY).toBe("db-password-42");
    expect(env).not.toHaveProperty("OTHER_SECRET");
  });
});

describe("serve, SIGHUP", () => {
  it("a variable a reloaded server's auth reads is withheld from children started after", async () => {
    const config = (auth?: unknown) => ({
      mcpServers: {
        all: { command: process.execPath, args: [FAULT_SERVER], inheritEnv: true },
        billing: { url: "http://127.0.0.1:9/mcp", ...(auth === undefined ? {} : { auth }) },
      },
    });
    const serve = await serveConfig(config(), PROXY_ENV);
    try {
      expect((await childEnv(serve.url, "all")).BILLING_CLIENT_SECRET).toBe(PROXY_ENV.BILLING_CLIENT_SECRET);
      writeFileSync(
        serve.configFile,
        JSON.stringify(
          config({
            grant: "client_credentials",
            clientId: "normalizer",
            clientSecret: "${BILLING_CLIENT_SECRET}",
            issuer: "http://127.0.0.1:9",
          }),
        ),
      );
      serve.child.kill("SIGHUP");
      await waitForStderr(serve, /SIGHUP: config re-read/);
      expect(await childEnv(serve.url, "all")).not.toHaveProperty("BILLING_CLIENT_SECRET");
    } finally {
      await serve.stop();
    }
  });
});

describe("serve --name -- CMD", () => {
  it("defaults to the SDK's variables; --inherit-env passes the rest", async () => {
    for (const [flags, inherited] of [
      [[], false],
      [["--inherit-env"], true],
    ] as const) {
      const serve = await startServe(["--name", "fx", ...flags, "--", process.execPath, FAULT_SERVER], PROXY_ENV);
      try {
        const env = await childEnv(serve.url, "fx");
        expect(env.HOME).toBe("/home/proxyuser");
        expect("OTHER_SECRET" in env).toBe(inherited);
        expect("PLAIN_SETTING" in env).toBe(inherited);
      } finally {
        await serve.stop();
      }
    }
  });
});

describe("stdio", () => {
  it("the child inherits what the host gave the proxy", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "stdio", "--", process.execPath, FAULT_SERVER],
      env: { ...process.env, ...PROXY_ENV } as Record<string, string>,
      stderr: "pipe",
    });
    const host = await connect(transport);
    const result = (await host.client.callTool({ name: "env", arguments: {} })) as { content: Array<{ text: string }> };
    const env = JSON.parse(result.content[0]!.text) as Record<string, string>;
    expect(env.OTHER_SECRET).toBe("db-password-42");
    expect(env.MCPN_TOKEN).toBe(PROXY_ENV.MCPN_TOKEN);
    await host.close();
  });
});

/** A config whose other servers read secrets, and a stdio server `local` (the fault server) beside them. */
function configWithSecrets(local: Record<string, unknown>): string {
  const file = join(tempDir(), "proxy.config.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        local,
        keyed: { command: process.execPath, args: [FAULT_SERVER], env: { UPSTREAM_KEY: "${OTHER_SECRET}" } },
        search: {
          url: "http://127.0.0.1:9/mcp?key=${SEARCH_QUERY_KEY}",
          headers: { "X-Api-Key": "${SEARCH_API_KEY}" },
        },
      },
      auth: { bearerTokens: ["${MCPN_TOKEN}"] },
    }),
  );
  return file;
}

const WITHHELD = ["MCPN_TOKEN", "OTHER_SECRET", "SEARCH_API_KEY", "SEARCH_QUERY_KEY"] as const;

describe("stdio and audit with --config FILE --server NAME", () => {
  it("stdio: the child inherits what the host gave, less the variables the config reads for credentials", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        CLI,
        "stdio",
        "--config",
        configWithSecrets({ command: process.execPath, args: [FAULT_SERVER] }),
        "--server",
        "local",
      ],
      env: { ...process.env, ...PROXY_ENV } as Record<string, string>,
      stderr: "pipe",
    });
    (transport.stderr as NodeJS.ReadableStream | null)?.resume();
    const host = await connect(transport);
    try {
      const result = (await host.client.callTool({ name: "env", arguments: {} })) as {
        content: Array<{ text: string }>;
      };
      const env = JSON.parse(result.content[0]!.text) as Record<string, string>;
      expect(env.PLAIN_SETTING).toBe("colour=blue");
      expect(env.HOME).toBe("/home/proxyuser");
      for (const name of WITHHELD) expect(JSON.stringify(env), name).not.toContain(PROXY_ENV[name]);
    } finally {
      await host.close();
    }
  });

  it("audit: the same, the server started as stdio would start it", async () => {
    const dump = join(tempDir(), "env.json");
    // A server that writes down its environment and exits: the audit fails, the file tells.
    const script = `require("fs").writeFileSync(${JSON.stringify(dump)}, JSON.stringify(process.env)); process.exit(3)`;
    const config = configWithSecrets({ command: process.execPath, args: ["-e", script] });
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = execFile(
        process.execPath,
        [CLI, "audit", "--config", config, "--server", "local", "--timeout", "20000"],
        { env: { ...process.env, ...PROXY_ENV }, timeout: 30_000 },
        (error, _stdout, stderr) => done({ code: error === null ? 0 : (child.exitCode ?? null), stderr }),
      );
    });
    expect(code, stderr).not.toBe(0);
    const env = JSON.parse(readFileSync(dump, "utf8")) as Record<string, string>;
    expect(env.PLAIN_SETTING).toBe("colour=blue");
    for (const name of WITHHELD) {
      expect(JSON.stringify(env), name).not.toContain(PROXY_ENV[name]);
      expect(stderr, name).not.toContain(PROXY_ENV[name]);
    }
  });
});
