/**
 * The README and docs/ stay usable: the README is short, every relative link resolves (to a file,
 * and an `#anchor` to a heading in it), every limit of the config schema has exactly one line in
 * docs/config.md with its real default, and no document names a limit the schema lacks or points
 * at documents a reader of this repository does not have.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { AUDIT_HELP } from "../../src/cli/commands/audit.js";
import { LOGIN_HELP } from "../../src/cli/commands/login.js";
import { NORMALIZE_HELP } from "../../src/cli/commands/normalize.js";
import { REPORT_HELP } from "../../src/cli/commands/report.js";
import { SERVE_HELP } from "../../src/cli/commands/serve.js";
import { STDIO_HELP } from "../../src/cli/commands/stdio.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { ROOT } from "../helpers/paths.js";

const README_MAX_BYTES = 16 * 1024;
const DOCS = join(ROOT, "docs");
const FILES = [
  join(ROOT, "README.md"),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(DOCS, f)),
];

/** The text outside fenced code blocks, line by line (links and headings in code are not links). */
function proseLines(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) out.push(line);
  }
  return out;
}

/** GitHub's anchor for a heading: formatting dropped, lower case, punctuation removed, spaces → "-". */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(readFileSync(file, "utf8"))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

function linksOf(file: string): Link[] {
  const links: Link[] = [];
  proseLines(readFileSync(file, "utf8")).forEach((raw, i) => {
    const line = raw.replace(/`[^`]*`/g, (code) => " ".repeat(code.length));
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      links.push({ file, line: i + 1, target: match[1]! });
    }
  });
  return links;
}

/** What is wrong with one relative link, or null when it resolves. */
function brokenReason(link: Link): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return null; // https:, mailto: … are not checked here
  const [path = "", anchor] = link.target.split("#", 2);
  const target = path === "" ? link.file : resolve(dirname(link.file), decodeURIComponent(path));
  if (!target.startsWith(ROOT)) return `points outside the repository (${path})`;
  if (!existsSync(target)) return `no such file: ${relative(ROOT, target)}`;
  if (anchor === undefined || anchor === "") return null;
  if (statSync(target).isDirectory() || !target.endsWith(".md")) {
    return `an anchor into ${relative(ROOT, target)}, which has no headings`;
  }
  return anchorsOf(target).has(anchor) ? null : `no heading for #${anchor} in ${relative(ROOT, target)}`;
}

const limitsSchema = ConfigSchema.shape.limits.unwrap() as unknown as { shape: Record<string, unknown> };
const limitsShape = limitsSchema.shape;
const LIMIT_KEYS = Object.keys(limitsShape);
const oneServer = { mcpServers: { a: { command: "x" } } };
const DEFAULT_LIMITS: Record<string, number | undefined> = ConfigSchema.parse(oneServer).limits;

describe("README and docs/", () => {
  it(`README.md is at most ${README_MAX_BYTES} bytes`, () => {
    expect(statSync(join(ROOT, "README.md")).size).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it("every relative link resolves to a file, and every #anchor to a heading in it", () => {
    const links = FILES.flatMap(linksOf);
    expect(links.length).toBeGreaterThan(50);
    const broken = links.flatMap((link) => {
      const reason = brokenReason(link);
      return reason === null ? [] : [`${relative(ROOT, link.file)}:${link.line}: (${link.target}) ${reason}`];
    });
    expect(broken).toEqual([]);
  });

  it("the anchor rule matches GitHub's for the headings these docs use", () => {
    expect(slug("`mcp-normalizer report LOG.jsonl…`")).toBe("mcp-normalizer-report-logjsonl");
    const formats = "Report formats (`--format md|json|html`, `-o FILE`)";
    expect(slug(formats)).toBe("report-formats---format-mdjsonhtml--o-file");
    expect(slug("Flood: a host that stops reading")).toBe("flood-a-host-that-stops-reading");
  });

  it("every limits.* key has exactly one line in docs/config.md, with the schema's default", () => {
    expect(LIMIT_KEYS.length).toBeGreaterThan(20);
    const rows = readFileSync(join(DOCS, "config.md"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("| `limits."));
    const problems: string[] = [];
    for (const key of LIMIT_KEYS) {
      const mine = rows.filter((row) => row.startsWith(`| \`limits.${key}\` |`));
      if (mine.length !== 1) {
        problems.push(`limits.${key}: ${mine.length} lines`);
        continue;
      }
      const documented = /^\s*(\d+)/.exec(mine[0]!.split("|")[2] ?? "");
      const actual = DEFAULT_LIMITS[key];
      if (actual === undefined) continue; // no default of its own (maxBodyBytes follows maxMessageBytes)
      if (documented === null || Number(documented[1]) !== actual) {
        problems.push(`limits.${key}: documented default ${documented?.[1] ?? "none"}, schema ${actual}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("docs/cli.md has a line for every flag each command's --help lists", () => {
    const helps = {
      serve: SERVE_HELP,
      stdio: STDIO_HELP,
      audit: AUDIT_HELP,
      login: LOGIN_HELP,
      report: REPORT_HELP,
      normalize: NORMALIZE_HELP,
    };
    const cli = readFileSync(join(DOCS, "cli.md"), "utf8");
    const missing: string[] = [];
    for (const [command, help] of Object.entries(helps)) {
      const section = cli.split(/^## /m).find((s) => s.startsWith(`\`${command}\``)) ?? "";
      if (section === "") missing.push(`no section for ${command}`);
      for (const [flag] of help.matchAll(/(?<![\w-])--[a-z][a-z-]+/g)) {
        // Selector and logging flags are documented once, in the sections the command's section links.
        const shared =
          /^--(help|url|transport|header|auth|config|server|command|arg|name|log-level|log-file|dry-run|charset)$/;
        const documented = section.includes(`\`${flag}`) || (shared.test(flag) && cli.includes(`\`${flag}`));
        if (!documented) missing.push(`${command} ${flag}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("no document names a limit the schema lacks", () => {
    const known = new Set(LIMIT_KEYS);
    const unknown = FILES.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\blimits\.([A-Za-z]+)/g)]
        .filter((m) => !known.has(m[1]!))
        .map((m) => `${relative(ROOT, file)}: limits.${m[1]}`),
    );
    expect(unknown).toEqual([]);
  });

  it("no document points at material outside the repository (design notes, issue numbers)", () => {
    const outside = /DESIGN\.md|\.\.\/shared\/|\bissues? #?\d+\b|STYLE habit/gi;
    const found = FILES.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(outside)].map((m) => `${relative(ROOT, file)}: ${m[0]}`),
    );
    expect(found).toEqual([]);
  });
});
