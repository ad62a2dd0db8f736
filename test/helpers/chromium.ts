/**
 * A headless Chromium for the browser tests, found without installing one by hand:
 *   1. MCPN_CHROMIUM, when set, names the executable (and must be one);
 *   2. else a system Chromium or Chrome at a usual path;
 *   3. else the browser shipped inside the @sparticuz/chromium devDependency (Linux x64), which
 *      `npm ci` brings with no download. It is brotli-compressed in the package: it is extracted
 *      once per package version under node_modules/.cache/mcpn-chromium/<version>/ — never into
 *      the package's own shared /tmp/chromium, where an extract of another version is reused and
 *      fails to launch. The extract is staged in a sibling folder and renamed into place when
 *      complete, so an interrupted or concurrent run never sees half a browser.
 * That browser is launched with its own NSS/NSPR/expat libraries (the package's Amazon Linux
 * set: a slim Debian or Ubuntu has none) and its own fonts, so it needs nothing from the system.
 */
import { spawnSync } from "node:child_process";
import {
  accessSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { pipeline } from "node:stream/promises";
import { brotliDecompressSync, createBrotliDecompress } from "node:zlib";
import { ROOT } from "./paths.js";

export interface FoundChromium {
  readonly executablePath: string;
  /** Environment for the browser process (undefined: inherit the test's). */
  readonly env: Record<string, string> | undefined;
  /** Where it came from, for the test's log line. */
  readonly source: string;
}

export const CHROMIUM_ENV = "MCPN_CHROMIUM";

const SYSTEM_CANDIDATES = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome-stable",
  "/usr/bin/google-chrome",
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function findChromium(): Promise<FoundChromium> {
  const named = process.env[CHROMIUM_ENV];
  if (named !== undefined && named !== "") {
    if (!isExecutable(named)) throw new Error(`${CHROMIUM_ENV}=${named} is not an executable file`);
    return { executablePath: named, env: undefined, source: `${CHROMIUM_ENV}` };
  }
  const system = SYSTEM_CANDIDATES.find(isExecutable);
  if (system !== undefined) return { executablePath: system, env: undefined, source: "system" };
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `no Chromium found: set ${CHROMIUM_ENV} to a Chromium or Chrome executable (the bundled @sparticuz/chromium runs on Linux x64 only)`,
    );
  }
  return bundledChromium();
}

/** The package folder of @sparticuz/chromium (its `exports` hide package.json from resolve). */
function bundledPackageDir(): string {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve("@sparticuz/chromium");
  } catch {
    throw new Error(
      `no Chromium found: @sparticuz/chromium is not installed (run npm ci), or set ${CHROMIUM_ENV} to a Chromium executable`,
    );
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "@sparticuz/chromium"
    )
      return dir;
  }
  throw new Error(`@sparticuz/chromium: no package.json above ${entry}`);
}

async function bundledChromium(): Promise<FoundChromium> {
  const pkgDir = bundledPackageDir();
  const version = (JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string }).version;
  const cacheRoot = join(ROOT, "node_modules", ".cache", "mcpn-chromium");
  const dir = join(cacheRoot, version);
  if (!isComplete(dir, version)) {
    mkdirSync(cacheRoot, { recursive: true });
    removeLeftovers(cacheRoot, version);
    const stage = `${dir}.partial-${process.pid}`;
    rmSync(stage, { recursive: true, force: true });
    try {
      await extract(join(pkgDir, "bin"), stage, dir);
      writeFileSync(join(stage, ".complete"), version);
      publish(stage, dir, version);
    } finally {
      rmSync(stage, { recursive: true, force: true });
    }
  }
  return {
    executablePath: join(dir, "chromium"),
    env: {
      ...(process.env as Record<string, string>),
      LD_LIBRARY_PATH: [join(dir, "al2023", "lib"), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":"),
      FONTCONFIG_PATH: join(dir, "fonts"),
    },
    source: `@sparticuz/chromium ${version}`,
  };
}

function isComplete(dir: string, version: string): boolean {
  try {
    return readFileSync(join(dir, ".complete"), "utf8") === version && isExecutable(join(dir, "chromium"));
  } catch {
    return false;
  }
}

/** Moves the finished stage into place; a concurrent run that got there first wins. */
function publish(stage: string, dir: string, version: string): void {
  try {
    renameSync(stage, dir);
  } catch (error) {
    if (isComplete(dir, version)) return;
    if ((error as NodeJS.ErrnoException).code !== "ENOTEMPTY" && (error as NodeJS.ErrnoException).code !== "EEXIST")
      throw error;
    rmSync(dir, { recursive: true, force: true });
    renameSync(stage, dir);
  }
}

/** Extracts of other versions, and stages of runs that died mid-extraction. */
function removeLeftovers(cacheRoot: string, version: string): void {
  for (const name of readdirSync(cacheRoot)) {
    const partial = /\.partial-(\d+)$/.exec(name);
    if (partial !== null ? !isAlive(Number(partial[1])) : name !== version)
      rmSync(join(cacheRoot, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The package's layout: chromium.br (the binary) and tar.br archives of fonts, SwiftShader,
 * libraries. Extracted into `out`, which is renamed to `final` afterwards.
 */
async function extract(bin: string, out: string, final: string): Promise<void> {
  mkdirSync(out, { recursive: true });
  await pipeline(
    createReadStream(join(bin, "chromium.br")),
    createBrotliDecompress(),
    createWriteStream(join(out, "chromium"), { mode: 0o755 }),
  );
  untar(brotliDecompressSync(readFileSync(join(bin, "swiftshader.tar.br"))), out);
  untar(brotliDecompressSync(readFileSync(join(bin, "al2023.tar.br"))), join(out, "al2023"));
  const fonts = join(out, "fonts");
  untar(brotliDecompressSync(readFileSync(join(bin, "fonts.tar.br"))), fonts);
  // The packaged fonts.conf names /tmp/fonts: point it at this extract instead.
  writeFileSync(
    join(fonts, "fonts.conf"),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(final, "fonts", "fonts")}</dir>\n  <cachedir>${join(final, "fonts", "cache")}</cachedir>\n</fontconfig>\n`,
  );
  // The extract must run here: a missing system library shows up now, named, not as a launch timeout.
  const check = spawnSync(join(out, "chromium"), ["--version"], {
    env: { ...process.env, LD_LIBRARY_PATH: join(out, "al2023", "lib") },
    encoding: "utf8",
    timeout: 30_000,
  });
  if (check.status !== 0)
    throw new Error(
      `the extracted @sparticuz/chromium does not run here: ${(check.stderr || check.error?.message || "").trim().slice(0, 500)}`,
    );
}

/** Regular files and folders of a ustar archive (all these archives hold). */
function untar(archive: Buffer, out: string): void {
  mkdirSync(out, { recursive: true });
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString("utf8")
        .replace(/\0.*$/s, "");
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join("/");
    if (name === "") break;
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1) || "0";
    const target = resolve(out, name);
    if (!target.startsWith(out + sep)) throw new Error(`tar entry outside its folder: ${name}`);
    if (type === "5") mkdirSync(target, { recursive: true });
    else if (type === "0") {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, archive.subarray(offset + 512, offset + 512 + size), {
        mode: Number.parseInt(field(100, 8).trim() || "644", 8) & 0o777,
      });
    } else throw new Error(`tar entry ${name}: type ${type} is not handled`);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
}
