/**
 * What is known about media types: extension ↔ type (mime-db), which types are textual, which
 * are generic, and which names are aliases of one another.
 */
import mimeDb from "mime-db";
import type { MediaType } from "./mediaType.js";

/** "Generic" types say nothing about the content. */
const GENERIC = new Set(["application/octet-stream", "binary/octet-stream", "application/unknown"]);

/** Textual types beyond `text/*`, mime-db charsets and structured suffixes. */
export const DEFAULT_EXTRA_TEXTUAL: readonly string[] = [
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/sql",
  "application/x-sql",
  "application/javascript",
  "application/x-javascript",
  "application/ecmascript",
  "application/typescript",
  "application/x-sh",
  "application/x-shellscript",
  "application/x-httpd-php",
  "application/graphql",
  "application/jsonl",
  "application/x-ndjson",
  "application/ndjson",
  "application/x-tex",
  "application/x-latex",
  "application/rtf",
  "image/svg+xml",
];

const TEXTUAL_SUFFIXES = new Set(["json", "xml", "yaml"]);

/**
 * Extensions mime-db maps to something that is wrong for the files MCP servers serve
 * (`.ts` is TypeScript far more often than an MPEG transport stream), or does not know.
 */
const EXTENSION_OVERRIDES: Readonly<Record<string, string>> = {
  ts: "text/x-typescript",
  mts: "text/x-typescript",
  cts: "text/x-typescript",
  tsx: "text/x-typescript",
  py: "text/x-python",
  pyi: "text/x-python",
  rb: "text/x-ruby",
  go: "text/x-go",
  rs: "text/x-rust",
  kt: "text/x-kotlin",
  swift: "text/x-swift",
  jsonl: "application/jsonl",
  ndjson: "application/x-ndjson",
  cfg: "text/plain",
  env: "text/plain",
  lock: "text/plain",
  gitignore: "text/plain",
  dockerfile: "text/plain",
  xml: "application/xml",
  sql: "application/sql",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  mp4: "video/mp4",
  flac: "audio/flac",
  ico: "image/x-icon",
  wav: "audio/wav",
};

const SOURCE_RANK: Readonly<Record<string, number>> = { iana: 3, apache: 2, nginx: 1 };

function buildExtensionTable(): Map<string, string> {
  const table = new Map<string, string>();
  const rank = new Map<string, number>();
  for (const [type, entry] of Object.entries(mimeDb)) {
    const r = SOURCE_RANK[entry.source ?? ""] ?? 0;
    for (const ext of entry.extensions ?? []) {
      const previous = rank.get(ext);
      if (previous === undefined || r > previous) {
        table.set(ext, type);
        rank.set(ext, r);
      }
    }
  }
  for (const [ext, type] of Object.entries(EXTENSION_OVERRIDES)) table.set(ext, type);
  return table;
}

const EXTENSIONS = buildExtensionTable();

/** Aliases folded to one canonical name when two types are compared. */
const ALIASES: Readonly<Record<string, string>> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "image/x-png": "image/png",
  "image/x-ms-bmp": "image/bmp",
  "image/x-bmp": "image/bmp",
  "image/vnd.microsoft.icon": "image/x-icon",
  "image/ico": "image/x-icon",
  "image/heif": "image/heic",
  "audio/mp3": "audio/mpeg",
  "audio/mpeg3": "audio/mpeg",
  "audio/x-mpeg": "audio/mpeg",
  "audio/x-mp3": "audio/mpeg",
  "audio/x-wav": "audio/wav",
  "audio/wave": "audio/wav",
  "audio/vnd.wave": "audio/wav",
  "audio/x-flac": "audio/flac",
  "audio/x-m4a": "audio/mp4",
  "audio/m4a": "audio/mp4",
  "audio/aac": "audio/mp4",
  "audio/x-aac": "audio/mp4",
  "audio/opus": "audio/ogg",
  "application/x-gzip": "application/gzip",
  "application/x-gunzip": "application/gzip",
  "application/gzip-compressed": "application/gzip",
  "application/x-zip-compressed": "application/zip",
  "application/x-zip": "application/zip",
  "application/x-pdf": "application/pdf",
  "application/acrobat": "application/pdf",
  "application/x-wasm": "application/wasm",
  "video/x-webm": "video/webm",
};

export function canonicalEssence(essence: string): string {
  return ALIASES[essence] ?? essence;
}

export function isGenericType(mt: MediaType | null): boolean {
  return mt === null || GENERIC.has(mt.essence);
}

/** Whether a type is textual. `extra` holds the configured list (already lowercased essences). */
export function isTextualType(mt: MediaType | null, extra: ReadonlySet<string>): boolean {
  if (mt === null) return false;
  if (mt.type === "text") return true;
  if (TEXTUAL_SUFFIXES.has(mt.suffix)) return true;
  if (extra.has(mt.essence)) return true;
  const entry = (mimeDb as Record<string, { charset?: string } | undefined>)[mt.essence];
  return entry?.charset !== undefined;
}

/**
 * The media type the URI's extension names, or null. Works for any scheme: the extension is
 * taken from the last path segment, ignoring query string and fragment.
 */
export function typeFromUri(uri: unknown): string | null {
  if (typeof uri !== "string" || uri.startsWith("data:")) return null;
  let path = uri;
  const cut = path.search(/[?#]/);
  if (cut !== -1) path = path.slice(0, cut);
  const segment = path.slice(path.lastIndexOf("/") + 1);
  const dot = segment.lastIndexOf(".");
  const ext = dot === -1 ? (segment.toLowerCase() === "dockerfile" ? "dockerfile" : "") : segment.slice(dot + 1);
  if (ext === "") return null;
  let decoded = ext;
  try {
    decoded = decodeURIComponent(ext);
  } catch {
    // A malformed escape: use the raw extension.
  }
  return EXTENSIONS.get(decoded.toLowerCase()) ?? null;
}
