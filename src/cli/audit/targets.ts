/**
 * What `audit` reads besides the listed resources, from its flags: `--call NAME[=JSON]`
 * (repeatable; the older `--call NAME --args JSON` pair still works), `--read URI` (repeatable),
 * `--uri GLOB` (repeatable filter of listed resources) and `--max-bytes N`.
 */
import { checkJsonText } from "../../config/jsonLocation.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { Glob } from "../../normalize/glob.js";
import { define, type JsonObject } from "../../normalize/objects.js";

export interface ToolCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

export function parseCalls(calls: readonly string[] | undefined, args: string | undefined): ToolCall[] {
  const flags = calls ?? [];
  if (args !== undefined) {
    if (flags.length !== 1 || flags[0]!.includes("="))
      throw new NormalizerError(
        "USAGE",
        "audit: --args goes with a single --call TOOL (for several calls: --call TOOL=JSON …)",
      );
    return [{ tool: flags[0]!, args: parseArgsJson(args, "--args") }];
  }
  const parsed = flags.map((flag) => {
    const eq = flag.indexOf("=");
    if (eq === -1) return { tool: nonEmpty(flag), args: {} };
    const tool = nonEmpty(flag.slice(0, eq));
    return { tool, args: parseArgsJson(flag.slice(eq + 1), `--call ${tool}=`) };
  });
  // The same call given twice (TOOL and TOOL={} too) is made once, as a URI given twice is read
  // once: lists of calls merged from several places must not count a result twice.
  const seen = new Set<string>();
  return parsed.filter((call) => {
    const key = JSON.stringify([call.tool, inKeyOrder(call.args)]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function nonEmpty(tool: string): string {
  if (tool.trim() === "") throw new NormalizerError("USAGE", "audit: --call expects a tool name (TOOL or TOOL=JSON)");
  return tool;
}

function parseArgsJson(text: string, flag: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Where, in the user's words, with what was given (Node's message quotes only a stretch of it).
    const at = checkJsonText(text);
    const where =
      at === undefined ? (error as Error).message : `at column ${at.column} (in ${at.path}): expected ${at.expected}`;
    const given = text.length > 80 ? `${text.slice(0, 80)}…` : text;
    throw new NormalizerError("USAGE", `audit: ${flag}${flag.endsWith("=") ? "" : " "}${given} is not JSON ${where}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    const given = Array.isArray(parsed) ? "an array" : parsed === null ? "null" : `a ${typeof parsed}`;
    throw new NormalizerError("USAGE", `audit: ${flag} expects a JSON object of arguments, got ${given}`);
  }
  return parsed as Record<string, unknown>;
}

/** `--uri` globs (`*` within a path segment, `**` across): a URI is kept when any matches; none given keeps all. */
export function uriFilter(globs: readonly string[] | undefined): (uri: string) => boolean {
  if (globs === undefined || globs.length === 0) return () => true;
  const patterns = globs.map((glob) => new Glob(glob));
  return (uri) => patterns.some((pattern) => pattern.test(uri));
}

export function parseReads(reads: readonly string[] | undefined): string[] {
  for (const uri of reads ?? [])
    if (uri.trim() === "") throw new NormalizerError("USAGE", "audit: --read expects a URI");
  return [...new Set(reads ?? [])];
}

/** A JSON value with every object's keys sorted: the same arguments written in another order are one call. */
function inKeyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inKeyOrder);
  if (typeof value !== "object" || value === null) return value;
  const out: JsonObject = {};
  // Defined, not assigned: a key "__proto__" stays a key.
  for (const key of Object.keys(value).sort()) define(out, key, inKeyOrder((value as Record<string, unknown>)[key]));
  return out;
}
