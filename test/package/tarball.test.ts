/**
 * The package as a user gets it: `npm pack`, then `npm install ./mcp-normalizer-*.tgz` in an empty
 * folder, then the `mcp-normalizer` executable (through npx) and the in-process import, with its
 * types, from that folder.
 *
 * Offline: the install must not need the network after `npm ci`. `npm ci` leaves every tarball
 * of the lock file in npm's cache but not the registry's package documents, which an install
 * without a lock file needs to pick versions. So the empty folder gets a lock file of its own:
 * the tarball plus the entries of this repository's lock file that are not dev-only — the very
 * versions a production install of this checkout resolves — and `npm install --offline` then
 * takes everything from the cache. A package dist/ imports but `dependencies` lacks is missing
 * from that lock, so the import below fails.
 *
 * `npm pack` runs with --ignore-scripts: the `prepack` script rebuilds dist/ in place, which
 * other tests run at the same time; globalSetup has just built dist/ the same way (tsc with
 * tsconfig.build.json).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_SERVER, ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** npm's own npm_* variables (a project root, a lifecycle event) would steer the child npm back at this checkout. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("npm_") || key === "npm_config_cache" || key === "npm_config_userconfig") env[key] = value;
  }
  return env;
}

function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: childEnv(), timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr: `${stderr}${error !== null && typeof error.code !== "number" ? `\n${error.message}` : ""}`,
        });
      },
    );
  });
}

interface LockEntry {
  readonly dev?: boolean;
  readonly [key: string]: unknown;
}

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  license: string;
  bin: Record<string, string>;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry>;
};

const dir = tempDir("mcpn-pack-");
const app = join(dir, "app");
let tarball = "";
let packed: string[] = [];

beforeAll(async () => {
  const pack = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], ROOT, 60_000);
  expect(pack.code, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = info!.filename;
  packed = info!.files.map((f) => f.path);

  mkdirSync(app);
  writeFileSync(join(app, tarball), readFileSync(join(dir, tarball)));
  const spec = `file:${tarball}`;
  const packages: Record<string, unknown> = {
    "": { name: "app", dependencies: { [pkg.name]: spec } },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: spec,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  // A link's entry has no dev flag of its own: its target's says (bench/stubs/pipenet).
  const devOnly = (entry: LockEntry): boolean =>
    entry.dev === true || (entry.link === true && lock.packages[entry.resolved as string]?.dev === true);
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path.startsWith("node_modules/") && !devOnly(entry)) packages[path] = entry;
  }
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", private: true, type: "module", dependencies: { [pkg.name]: spec } }),
  );
  writeFileSync(
    join(app, "package-lock.json"),
    JSON.stringify({ name: "app", lockfileVersion: 3, requires: true, packages }),
  );
  const install = await run("npm", ["install", `./${tarball}`, "--offline", "--no-audit", "--no-fund"], app, 120_000);
  expect(install.code, install.stderr).toBe(0);
}, 200_000);

describe("the npm package", () => {
  it("holds the built CLI, the library with its types, the config schema, the docs and the licence — no sources, tests, benchmarks or source maps", () => {
    expect(tarball).toBe(`${pkg.name}-${pkg.version}.tgz`);
    expect(packed).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "LICENSE",
        "dist/cli.js",
        "dist/index.js",
        "dist/index.d.ts",
        "config/proxy.config.schema.json",
      ]),
    );
    expect(
      packed.filter(
        (p) => /^(src|test|bench|notes|scripts|node_modules)\//.test(p) || p.endsWith(".map") || p.endsWith(".tgz"),
      ),
    ).toEqual([]);
    // Every compiled file has its source: no leftovers of deleted modules in dist/.
    const orphans = packed
      .filter((p) => p.startsWith("dist/"))
      .filter(
        (p) =>
          !existsSync(
            join(
              ROOT,
              "src",
              p
                .slice("dist/".length)
                .replace(/(\.d\.ts|\.js)$/, ".ts")
                .replace(/(\.d\.cts|\.cjs)$/, ".cts"),
            ),
          ),
      );
    expect(orphans).toEqual([]);
  });

  it("holds every document the README links to", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const linked = [...readme.matchAll(/\]\((docs\/[^)#]+)/g)].map((m) => m[1]!);
    expect(linked.length).toBeGreaterThan(5);
    expect(linked.filter((path) => !packed.includes(path))).toEqual([]);
  });

  it("from CommonJS: require() loads it where Node can require an ES module, else says to import() it", async () => {
    const script = 'console.log(typeof require("mcp-normalizer").withNormalization)';
    const loaded = await run(process.execPath, ["-e", script], app, 30_000);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(loaded.stdout.trim()).toBe("function");
    // Node before 20.19 cannot require one: the flag makes this Node do as they do.
    const refused = await run(process.execPath, ["--no-experimental-require-module", "-e", script], app, 30_000);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("mcp-normalizer is an ES module: load it with `import { withNormalization } from");
    const schema = await run(
      process.execPath,
      ["-e", 'console.log(require("mcp-normalizer/config/proxy.config.schema.json").type)'],
      app,
      30_000,
    );
    expect(schema.stdout.trim(), schema.stderr).toBe("object");
  });

  it("installed from its tarball, `npx mcp-normalizer --help` prints the usage", async () => {
    // --no: never fetch a package of that name from the registry if the local bin were missing.
    const help = await run("npx", ["--no", "--offline", "mcp-normalizer", "--help"], app, 30_000);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: mcp-normalizer <command> \[options\]$/m);
    const normalize = await run("npx", ["--no", "--offline", "mcp-normalizer", "normalize", "--help"], app, 30_000);
    expect(normalize.code, normalize.stderr).toBe(0);
  });

  it("installed from its tarball, an SVG is drawn (in its child process) and arrives as a PNG", async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="3000" height="600"><rect width="3000" height="600"/></svg>';
    const input = join(app, "svg-result.json");
    writeFileSync(
      input,
      JSON.stringify({
        content: [{ type: "image", mimeType: "image/svg+xml", data: Buffer.from(svg).toString("base64") }],
      }),
    );
    const config = { mcpServers: { any: { command: "true" } }, normalize: { images: true } };
    writeFileSync(join(app, "fit.config.json"), JSON.stringify(config));
    const fitted = await run(
      "npx",
      [
        "--no",
        "--offline",
        "mcp-normalizer",
        "normalize",
        input,
        "--method",
        "tools/call",
        "--config",
        "fit.config.json",
      ],
      app,
      60_000,
    );
    expect(fitted.code, fitted.stderr).toBe(0);
    const block = (JSON.parse(fitted.stdout) as { content: Array<{ mimeType: string; data: string }> }).content[0]!;
    expect(block.mimeType, fitted.stderr).toBe("image/png");
    expect(Buffer.from(block.data, "base64").subarray(1, 4).toString("latin1")).toBe("PNG");
  });

  it('`import { withNormalization } from "mcp-normalizer"` works: an SDK client reads a blob as text through it', async () => {
    writeFileSync(
      join(app, "host.mjs"),
      `import { withNormalization } from "mcp-normalizer";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const events = [];
const client = new Client({ name: "packaged-host", version: "1" });
await client.connect(withNormalization(new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(FIXTURE_SERVER)}], stderr: "ignore" }), { onNormalized: (e) => events.push(e.changes[0].action) }));
const result = await client.readResource({ uri: "file:///docs/readme.md" });
await client.close();
console.log(JSON.stringify({ content: result.contents[0], events }));
`,
    );
    const host = await run(process.execPath, ["host.mjs"], app, 30_000);
    expect(host.code, host.stderr).toBe(0);
    expect(JSON.parse(host.stdout)).toMatchObject({
      content: { uri: "file:///docs/readme.md", mimeType: "text/markdown", text: "# Title\n\nSome *markdown*.\n" },
      events: ["unwrap-blob"],
    });
  });

  it("the import has types (a misuse is a type error, an unknown export is too)", async () => {
    writeFileSync(
      join(app, "host.ts"),
      `import { withNormalization, type NormalizationOptions, type NormalizationEvent } from "mcp-normalizer";
import { silentLogger, type BridgeOptions, type Logger } from "mcp-normalizer";
const options: NormalizationOptions = { onNormalized: (event: NormalizationEvent) => void event.changes.length };
// A bridge's logger can be named and made from the package alone.
const logger: Logger = silentLogger;
const bridgeLogger: BridgeOptions["logger"] = logger;
void bridgeLogger;
// @ts-expect-error: not a transport
withNormalization(42, options);
// @ts-expect-error: no such export
import { notExported } from "mcp-normalizer";
void notExported;
`,
    );
    const compilerOptions = {
      noEmit: true,
      strict: true,
      skipLibCheck: true,
      module: "nodenext",
      moduleResolution: "nodenext",
      target: "es2022",
      types: [],
    };
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["host.ts"] }));
    const tsc = await run(
      process.execPath,
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"],
      app,
      60_000,
    );
    expect(tsc.code, `${tsc.stdout}${tsc.stderr}`).toBe(0);
  });
});
