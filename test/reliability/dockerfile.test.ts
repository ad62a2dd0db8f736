/**
 * Running as a sidecar: no Docker engine runs here, so the Dockerfile is checked for what a
 * sidecar image needs (node:20-slim, a build stage for dist/, `npm ci --omit=dev`, a non-root
 * user, a HEALTHCHECK on /healthz) and its exact start command — ENTRYPOINT + CMD, parsed from
 * the file — runs as a process, with the image's /app mapped to this checkout; then the
 * HEALTHCHECK command itself is run against it.
 */
import { execFile, spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { DOCKERFILE_STAGES, execForm, FINAL_STAGE, finalInstruction } from "../helpers/dockerfile.js";
import { FIXTURE_SERVER, ROOT } from "../helpers/paths.js";
import { serveConfig, tempDir } from "./helpers.js";

/** What the log check reads of an example config. */
interface ExampleConfig {
  readonly log?: { readonly file?: string };
}

const stages = DOCKERFILE_STAGES;
const final = FINAL_STAGE;
const one = finalInstruction;
const workdir = one("WORKDIR")!.args;

/** The image's paths mapped onto this checkout, `node` onto this Node. */
function localArgv(argv: readonly string[], configPath: string): string[] {
  return argv.map((arg, i) => {
    if (i === 0 && arg === "node") return process.execPath;
    if (arg === "/config/proxy.config.json") return configPath;
    return arg.startsWith(`${workdir}/`) ? join(ROOT, arg.slice(workdir.length + 1)) : arg;
  });
}

describe("the Dockerfile", () => {
  it("builds dist/ in a build stage and runs on node:20-slim with production dependencies only, as a non-root user", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const build = stages[0]!;
    expect(build[0]!.args).toMatch(/^node:20-slim AS (\w+)$/i);
    const buildName = /AS (\w+)$/i.exec(build[0]!.args)![1]!;
    expect(build.some((i) => i.op === "RUN" && /\bnpm ci\b/.test(i.args) && !/--omit=dev/.test(i.args))).toBe(true);
    expect(build.some((i) => i.op === "RUN" && /tsc -p tsconfig\.build\.json/.test(i.args))).toBe(true);

    expect(final[0]!.args).toMatch(/^node:20-slim$/);
    expect(final.some((i) => i.op === "RUN" && /npm ci --omit=dev/.test(i.args))).toBe(true);
    expect(
      final.some((i) => i.op === "COPY" && i.args.includes(`--from=${buildName}`) && i.args.includes("/dist")),
    ).toBe(true);
    // Numeric (Kubernetes' runAsNonRoot cannot check a user name) and not root.
    const user = one("USER")!.args;
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    expect(one("HEALTHCHECK")!.args).toMatch(/CMD/);
    expect(readFileSync(join(ROOT, ".dockerignore"), "utf8")).toMatch(/^node_modules$/m);
  });

  it("an example config's absolute log file is in a folder the image makes and gives its user", () => {
    const user = one("USER")!.args;
    const runs = final.filter((i) => i.op === "RUN").map((i) => i.args);
    const folders = readdirSync(join(ROOT, "config", "examples"))
      .filter((f) => f.endsWith(".json"))
      .map((f) => (JSON.parse(readFileSync(join(ROOT, "config", "examples", f), "utf8")) as ExampleConfig).log?.file)
      .filter((file): file is string => file !== undefined && isAbsolute(file))
      .map((file) => dirname(file));
    expect(folders.length).toBeGreaterThan(0);
    for (const folder of folders) {
      expect(
        runs.some((run) => new RegExp(`mkdir -p (\\S+ )*${folder}( |$)`).test(run)),
        folder,
      ).toBe(true);
      expect(
        runs.some((run) => run.includes(`chown ${user} ${folder}`)),
        folder,
      ).toBe(true);
    }
  });

  it("what dist/ imports is in `dependencies` (the image installs nothing else)", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const missing = new Set<string>();
    const files = readdirSync(join(ROOT, "dist"), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".js"));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const code = readFileSync(join(ROOT, "dist", file), "utf8");
      const specs = [
        ...code.matchAll(/^\s*(?:import|export)\b[^;]*?from\s*["']([^"']+)["']/gm),
        ...code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
      ].map((m) => m[1]!);
      for (const spec of specs) {
        if (spec.startsWith(".")) continue;
        if (spec.startsWith("node:")) continue;
        const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
        if (!(name in pkg.dependencies)) missing.add(`${name} (${file})`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it("its ENTRYPOINT + CMD start the proxy from a mounted config, and its HEALTHCHECK passes against it (and fails once it stopped)", async () => {
    const dir = tempDir();
    const configPath = join(dir, "proxy.config.json");
    writeFileSync(
      configPath,
      JSON.stringify({
        listen: { host: "127.0.0.1", port: 0 },
        mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
        auth: { bearerTokens: ["${MCPN_TOKEN}"] },
      }),
    );
    const argv = localArgv([...execForm(one("ENTRYPOINT")!.args), ...execForm(one("CMD")!.args)], configPath);
    expect(argv.slice(1)).toEqual([join(ROOT, "dist", "cli.js"), "serve", "--config", configPath]);

    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: ROOT,
      env: { ...process.env, MCPN_TOKEN: "sidecar-test-token" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      void exited.then((code) => reject(new Error(`exited ${code}`)));
    });
    const health = execForm(one("HEALTHCHECK")!.args.replace(/^.*?CMD\s+/, ""));
    const probe = (healthUrl: string) =>
      promisify(execFile)(localArgv(health, configPath)[0]!, localArgv(health, configPath).slice(1), {
        env: { ...process.env, MCPN_HEALTH_URL: healthUrl },
      }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? -1,
      );
    expect(one("ENV")!.args).toContain("MCPN_HEALTH_URL=http://127.0.0.1:8808/healthz");
    expect(await probe(`${url}/healthz`)).toBe(0);
    // Everything else needs the token.
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: "Bearer sidecar-test-token" } })).status).toBe(
      200,
    );
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(await probe(`${url}/healthz`)).toBe(1);
  });

  it("with allowedHosts as kubernetes.md lists them, its HEALTHCHECK passes; with the Service name alone, it is refused", async () => {
    const listed = /"allowedHosts": (\[[^\]]*\])/.exec(readFileSync(join(ROOT, "docs", "kubernetes.md"), "utf8"));
    expect(listed).not.toBeNull();
    const allowedHosts = JSON.parse(listed![1]!) as string[];
    const health = execForm(one("HEALTHCHECK")!.args.replace(/^.*?CMD\s+/, ""));
    const probe = async (hosts: string[]) => {
      const serve = await serveConfig({
        listen: { host: "127.0.0.1", port: 0 },
        mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
        allowedHosts: hosts,
      });
      try {
        const argv = localArgv(health, serve.configFile);
        return await promisify(execFile)(argv[0]!, argv.slice(1), {
          env: { ...process.env, MCPN_HEALTH_URL: `${serve.url}/healthz` },
        }).then(
          () => 0,
          (error: { code?: number }) => error.code ?? -1,
        );
      } finally {
        await serve.stop();
      }
    };
    expect(await probe(allowedHosts)).toBe(0);
    expect(await probe(allowedHosts.filter((host) => host !== "127.0.0.1"))).toBe(1);
  });

  it("the ENTRYPOINT with `serve --url` flags runs without a config file", async () => {
    const argv = localArgv(
      [
        ...execForm(one("ENTRYPOINT")!.args),
        "serve",
        "--name",
        "api",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--port",
        "0",
      ],
      "",
    );
    const child = spawn(argv[0]!, argv.slice(1), { cwd: tempDir(), stdio: ["ignore", "pipe", "pipe"] });
    const line = await new Promise<string>((resolve) => {
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("/mcp/api")) resolve(out);
      });
    });
    expect(line).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
