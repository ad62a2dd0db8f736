/**
 * The official reference servers from npm (devDependencies, so no network once `npm ci` is
 * done) as a desktop host's `mcpServers` block, and the scripts a real session runs against
 * each: listings, reads, prompts, tool calls with images, resource links, structured content,
 * progress, completions, a knowledge graph built and torn down, files read as text and media.
 *
 * `compareResults` says how a result through the proxy may differ from the server's own: only
 * in the fields the proxy owns (OWNED_FIELDS), and there only in form, never in content.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, MEMORY_SERVER } from "../helpers/paths.js";
import { raw } from "../helpers/proxyProcess.js";

export interface Step {
  readonly label: string;
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export interface StepOutcome {
  readonly label: string;
  readonly result?: unknown;
  readonly error?: { code: number | undefined; message: string };
  /** Progress notifications received for this step. */
  readonly progress: number;
}

export interface RealServer {
  /** Its key in the `mcpServers` block (and so its URL path segment). */
  readonly name: string;
  readonly entry: { command: string; args: string[]; env?: Record<string, string> };
  readonly steps: readonly Step[];
  /** Text the server makes different on every call (a time of day): replaced before comparing. */
  readonly volatile: readonly RegExp[];
}

/** A one-pixel PNG. */
const PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";

const tool = (label: string, name: string, args: Record<string, unknown> = {}): Step => ({
  label,
  method: "tools/call",
  params: { name, arguments: args },
});

/** The three servers, their files under `dir` (made here). */
export function realServers(dir: string): RealServer[] {
  const docs = join(dir, "docs");
  mkdirSync(join(docs, "sub"), { recursive: true });
  writeFileSync(join(docs, "notes.md"), "# Notes\n\nGrüße aus dem Test.\n");
  writeFileSync(join(docs, "plain.txt"), "plain text, one line\n");
  writeFileSync(join(docs, "sub", "data.json"), '{"answer": 42}\n');
  writeFileSync(join(docs, "pixel.png"), Buffer.from(PIXEL_PNG, "base64"));
  const memoryFile = join(dir, "memory.jsonl");
  const entities = [
    { name: "Ada", entityType: "person", observations: ["wrote the first program"] },
    { name: "Analytical Engine", entityType: "machine", observations: ["designed by Babbage"] },
  ];
  return [
    {
      name: "everything",
      entry: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] },
      volatile: [/\b\d{1,2}:\d{2}:\d{2}\s?[AP]M\b/g, /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\b/g],
      steps: [
        { label: "tools/list", method: "tools/list" },
        { label: "resources/list", method: "resources/list" },
        { label: "resources/templates/list", method: "resources/templates/list" },
        { label: "prompts/list", method: "prompts/list" },
        ...["architecture", "extension", "features", "how-it-works", "instructions"].map((doc) => ({
          label: `read ${doc}.md`,
          method: "resources/read",
          params: { uri: `demo://resource/static/document/${doc}.md` },
        })),
        { label: "read dynamic text", method: "resources/read", params: { uri: "demo://resource/dynamic/text/1" } },
        {
          label: "read dynamic blob (text in base64)",
          method: "resources/read",
          params: { uri: "demo://resource/dynamic/blob/2" },
        },
        { label: "simple-prompt", method: "prompts/get", params: { name: "simple-prompt" } },
        {
          label: "args-prompt",
          method: "prompts/get",
          params: { name: "args-prompt", arguments: { city: "Paris", state: "Île-de-France" } },
        },
        {
          label: "resource-prompt",
          method: "prompts/get",
          params: { name: "resource-prompt", arguments: { resourceType: "Blob", resourceId: "3" } },
        },
        {
          label: "complete",
          method: "completion/complete",
          params: {
            ref: { type: "ref/prompt", name: "completable-prompt" },
            argument: { name: "department", value: "E" },
          },
        },
        tool("echo", "echo", { message: "héllo ✓" }),
        tool("get-sum", "get-sum", { a: 2, b: 40 }),
        tool("get-tiny-image", "get-tiny-image"),
        tool("get-annotated-message", "get-annotated-message", { messageType: "error", includeImage: true }),
        tool("get-resource-links", "get-resource-links", { count: 3 }),
        tool("get-resource-reference text", "get-resource-reference", { resourceType: "Text", resourceId: 4 }),
        tool("get-resource-reference blob", "get-resource-reference", { resourceType: "Blob", resourceId: 5 }),
        tool("get-structured-content", "get-structured-content", { location: "New York" }),
        tool("long-running operation with progress", "trigger-long-running-operation", { duration: 1, steps: 2 }),
        tool("unknown tool", "no-such-tool"),
      ],
    },
    {
      name: "filesystem",
      entry: { command: process.execPath, args: [FILESYSTEM_SERVER, docs] },
      volatile: [],
      steps: [
        { label: "tools/list", method: "tools/list" },
        // First, so that every session (direct or not) lists the same files.
        tool("write_file", "write_file", { path: join(docs, "written.txt"), content: "written through a session\n" }),
        tool("list_allowed_directories", "list_allowed_directories"),
        tool("list_directory", "list_directory", { path: docs }),
        tool("directory_tree", "directory_tree", { path: docs }),
        tool("search_files", "search_files", { path: docs, pattern: "**/*.json" }),
        tool("read_text_file", "read_text_file", { path: join(docs, "notes.md") }),
        tool("read_text_file head", "read_text_file", { path: join(docs, "plain.txt"), head: 1 }),
        tool("read_media_file markdown (a text file as a generic blob)", "read_media_file", {
          path: join(docs, "notes.md"),
        }),
        tool("read_media_file json", "read_media_file", { path: join(docs, "sub", "data.json") }),
        tool("read_media_file png", "read_media_file", { path: join(docs, "pixel.png") }),
        tool("read_multiple_files", "read_multiple_files", {
          paths: [join(docs, "plain.txt"), join(docs, "sub", "data.json")],
        }),
        tool("read what was written", "read_text_file", { path: join(docs, "written.txt") }),
        tool("outside the allowed directories", "read_text_file", { path: "/etc/hostname" }),
      ],
    },
    {
      name: "memory",
      entry: { command: process.execPath, args: [MEMORY_SERVER], env: { MEMORY_FILE_PATH: memoryFile } },
      volatile: [],
      steps: [
        { label: "tools/list", method: "tools/list" },
        tool("create_entities", "create_entities", { entities }),
        tool("create_relations", "create_relations", {
          relations: [{ from: "Ada", to: "Analytical Engine", relationType: "programmed" }],
        }),
        tool("add_observations", "add_observations", {
          observations: [{ entityName: "Ada", contents: ["née Byron"] }],
        }),
        tool("read_graph", "read_graph"),
        tool("search_nodes", "search_nodes", { query: "Babbage" }),
        tool("open_nodes", "open_nodes", { names: ["Ada"] }),
        { label: "resources/list", method: "resources/list" },
        { label: "read the graph resource", method: "resources/read", params: { uri: "memory://knowledge-graph" } },
        // Leaves the file as it found it: the next session starts from the same empty graph.
        tool("delete_entities", "delete_entities", { entityNames: entities.map((e) => e.name) }),
        tool("read_graph after delete", "read_graph"),
      ],
    },
  ];
}

/** Runs the steps in order, recording each result or error and the progress it brought. */
export async function runSteps(client: Client, steps: readonly Step[]): Promise<StepOutcome[]> {
  const out: StepOutcome[] = [];
  for (const step of steps) {
    let progress = 0;
    const options = { timeout: 30_000, onprogress: () => void progress++ };
    try {
      const result = await raw(client, step.method, step.params ?? {}, options);
      out.push({ label: step.label, result, progress });
    } catch (error) {
      const { code, message } = error as { code?: number; message: string };
      out.push({ label: step.label, error: { code, message }, progress });
    }
  }
  return out;
}

/**
 * The fields the proxy owns, and so the only ones allowed to differ from the server's own
 * result: in a resource's contents (`{uri, text | blob, mimeType}`: read results, embedded
 * resources) `text`, `blob` and `mimeType`; in an image or audio block, `mimeType`. Where they
 * differ, the content must still be the same: text equal to the blob's bytes read as UTF-8.
 */
export const OWNED_FIELDS = [
  "contents[].text",
  "contents[].blob",
  "contents[].mimeType",
  "resource.text",
  "resource.blob",
  "resource.mimeType",
  "image|audio block.mimeType",
] as const;

export interface Difference {
  readonly path: string;
  readonly direct: unknown;
  readonly proxied: unknown;
}

/** Differences outside the owned fields (should be none), and the owned ones (for the test to check and show). */
export function compareResults(
  direct: unknown,
  proxied: unknown,
  volatile: readonly RegExp[],
): { foreign: Difference[]; owned: Difference[] } {
  const foreign: Difference[] = [];
  const owned: Difference[] = [];
  const scrub = (value: unknown): unknown =>
    typeof value === "string" ? volatile.reduce((text, pattern) => text.replace(pattern, "<volatile>"), value) : value;
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (isResourceContents(a) && isResourceContents(b)) {
      compareContents(a, b, path);
      return;
    }
    if (isMediaBlock(a) && isMediaBlock(b)) {
      const { mimeType: ma, ...restA } = a;
      const { mimeType: mb, ...restB } = b;
      if (ma !== mb) owned.push({ path: `${path}.mimeType`, direct: ma, proxied: mb });
      walkObject(restA, restB, path);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) foreign.push({ path: `${path}.length`, direct: a.length, proxied: b.length });
      for (let i = 0; i < Math.min(a.length, b.length); i++) walk(a[i], b[i], `${path}[${i}]`);
      return;
    }
    if (isObject(a) && isObject(b)) {
      walkObject(a, b, path);
      return;
    }
    if (scrub(a) !== scrub(b)) foreign.push({ path, direct: a, proxied: b });
  };
  const walkObject = (a: Record<string, unknown>, b: Record<string, unknown>, path: string): void => {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[key], b[key], `${path}.${key}`);
  };
  const compareContents = (a: Record<string, unknown>, b: Record<string, unknown>, path: string): void => {
    const textA = contentText(a);
    const textB = contentText(b);
    // The same content in either form: equal text, or the same bytes.
    if (
      scrub(textA.text) !== scrub(textB.text) ||
      (textA.bytes !== undefined && textB.bytes !== undefined && !textA.bytes.equals(textB.bytes))
    ) {
      foreign.push({ path: `${path} (content)`, direct: textA.text ?? "<binary>", proxied: textB.text ?? "<binary>" });
    }
    for (const key of ["text", "blob", "mimeType"])
      if (a[key] !== b[key] && !(key === "text" && scrub(a[key]) === scrub(b[key])))
        owned.push({ path: `${path}.${key}`, direct: abbreviate(a[key]), proxied: abbreviate(b[key]) });
    const { text: _ta, blob: _ba, mimeType: _ma, ...restA } = a;
    const { text: _tb, blob: _bb, mimeType: _mb, ...restB } = b;
    walkObject(restA, restB, path);
  };
  walk(direct, proxied, "$");
  return { foreign, owned };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isResourceContents(value: unknown): value is Record<string, unknown> {
  return (
    isObject(value) &&
    typeof value.uri === "string" &&
    (typeof value.text === "string" || typeof value.blob === "string")
  );
}

function isMediaBlock(value: unknown): value is Record<string, unknown> & { mimeType?: unknown } {
  return isObject(value) && (value.type === "image" || value.type === "audio") && typeof value.data === "string";
}

/** A contents entry's text: its `text`, or its blob's bytes when they are UTF-8 (else only the bytes). */
function contentText(entry: Record<string, unknown>): { text: string | undefined; bytes: Buffer | undefined } {
  if (typeof entry.text === "string") return { text: entry.text, bytes: undefined };
  const bytes = Buffer.from(entry.blob as string, "base64");
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  return { text: Buffer.from(text, "utf8").equals(bytes) ? text : undefined, bytes };
}

function abbreviate(value: unknown): unknown {
  return typeof value === "string" && value.length > 60 ? `${value.slice(0, 57)}…` : value;
}
