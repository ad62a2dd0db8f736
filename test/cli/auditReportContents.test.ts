/**
 * What `audit` writes into a report: never what the upstream was given to keep secret — an `env`
 * value quoted back in a server's error or printed on stderr before it crashed, a URL's query
 * (where API keys go) — and never a server's megabyte URI whole; an answer the audit cannot read
 * (over `limits.maxMessageBytes`) fails its read at once, saying why, instead of waiting for the
 * timeout. Real `audit` runs, a real stdio fixture server and a real streamable HTTP one.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startStreamableHttpFixture } from "../fixtures/upstream-servers/httpFixtures.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const AUDIT_UPSTREAM = fileURLToPath(new URL("../fixtures/servers/audit-upstream.mjs", import.meta.url));
const SECRET = "s3cr3t-env-value-4711";
const dir = tempDir("mcpn-audit-secrets-");

/** A config whose one server is the audit fixture, given `env`. */
function configWith(env: Record<string, string>, limits: Record<string, number> = {}): string {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(
    file,
    JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [AUDIT_UPSTREAM], env } }, limits }),
  );
  return file;
}

describe("audit never writes a secret into its report", () => {
  for (const leak of ["error", "crash"] as const) {
    it(`an env value the server quotes back (${leak === "error" ? "in an error" : "on stderr as it crashes"})`, async () => {
      const config = configWith({ AUDIT_KEY: SECRET, AUDIT_LEAK: leak });
      for (const format of ["json", "md", "html"]) {
        const run = await runCli([
          "audit",
          "--config",
          config,
          "--server",
          "fx",
          "--format",
          format,
          "--concurrency",
          "1",
        ]);
        expect(run.code, run.stderr).toBe(0);
        // Markdown writes it escaped.
        expect(run.stdout).toMatch(/\\?\[redacted\\?\]/);
        expect(run.stdout).not.toContain(SECRET);
        expect(run.stderr).not.toContain(SECRET);
      }
    });
  }

  it("the query of an upstream URL", async () => {
    const fixture = await startStreamableHttpFixture();
    try {
      const run = await runCli(["audit", "--format", "json", "--url", `${fixture.url}?token=QUERYSECRET`]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).not.toContain("QUERYSECRET");
      const report = JSON.parse(run.stdout) as { source: { upstream: string } };
      expect(report.source.upstream).toBe(fixture.url);
    } finally {
      await fixture.close();
    }
  });
});

describe("an answer audit cannot read", () => {
  it("over limits.maxMessageBytes fails its read at once, naming the limit", async () => {
    const config = configWith({ AUDIT_BIG_BYTES: String(2 * 1024 * 1024) }, { maxMessageBytes: 1024 * 1024 });
    const started = Date.now();
    const run = await runCli(["audit", "--config", config, "--server", "fx", "--format", "json", "--timeout", "20000"]);
    expect(run.code, run.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    const report = JSON.parse(run.stdout) as { failures: Array<{ uri: string; error: string }> };
    expect(report.failures).toContainEqual(
      expect.objectContaining({
        uri: "audit://ok.txt",
        error: expect.stringMatching(/the answer of \d+ bytes is over limits\.maxMessageBytes/),
      }),
    );
  }, 30_000);
});

describe("what a server chose, at any length", () => {
  it("a 2 MB URI is held in the report as its first 1024 characters, its length and a hash", async () => {
    const run = await runCli(["audit", "--format", "json", "--", process.execPath, AUDIT_UPSTREAM], {
      env: { AUDIT_LONG_URI: String(2_000_000) },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.length).toBeLessThan(100_000);
    const report = JSON.parse(run.stdout) as { items: Array<{ target: string; uri: string | null }> };
    const long = report.items.find((item) => item.target.startsWith("audit://long/"));
    expect(long?.target).toMatch(/^audit:\/\/long\/x+…\[2000013 chars, fnv1a [0-9a-f]{8}\]$/);
    expect(long?.target.length).toBeLessThan(1100);
    expect(long?.uri).toBe(long?.target);
  }, 30_000);
});

describe("a server's words in audit's own errors", () => {
  it("an initialize error with line breaks and escape codes is one line, its controls shown", async () => {
    const server = join(dir, "refusing-server.mjs");
    writeFileSync(
      server,
      `import { createInterface } from "node:readline";
createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  const error = { code: -32600, message: "first line\\nsecond line \\u001b[2J cleared" };
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error }) + "\\n");
});
`,
    );
    const run = await runCli(["audit", "--", process.execPath, server]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("initialize failed: first line second line ␛[2J cleared (JSON-RPC -32600)");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});
