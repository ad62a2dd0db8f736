/**
 * `${VAR}` (and `${VAR:-default}`, and `${env:VAR}` as Cursor and VS Code write it) in any string
 * of the config reads the environment, so secrets stay out of the file. A missing variable is an
 * error naming the variable and the JSON path.
 * A default may itself hold references (`${A:-${B:-x}}`); it is expanded only when used, so a
 * variable named only in an unused default need not exist. `$` not followed by `{NAME` stays
 * as written, and so does `${NAME…}` in another shell form (`${HOME/a/b}`); `${NAME` with no
 * closing brace after it is an error naming the path.
 */
import { NormalizerError } from "../errors/NormalizerError.js";
import { define, type JsonObject } from "../normalize/objects.js";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** Variables editors (VS Code, Cursor) fill in themselves: no environment has them. */
const EDITOR_VARIABLES: ReadonlySet<string> = new Set([
  "workspaceFolder",
  "workspaceFolderBasename",
  "workspaceRoot",
  "userHome",
  "pathSeparator",
  "fileDirname",
]);

/** Told of each variable a string reads (`path` is the JSON path of the string). */
export type OnReference = (variable: string, path: string) => void;

/** The JSON path of member `key` of the value at `path`, as errors name it. */
export function memberPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * `value` with every `${VAR}` read. Under a path `keepMissing` names (a disabled server: never
 * started, so it needs none of its variables), a variable that is not set is left as written.
 */
export function expandEnv(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  file: string,
  path = "$",
  onReference?: OnReference,
  keepMissing: (path: string) => boolean = () => false,
): unknown {
  if (typeof value === "string") return expandString(value, env, file, path, onReference, keepMissing(path));
  if (Array.isArray(value))
    return value.map((item, i) => expandEnv(item, env, file, `${path}[${i}]`, onReference, keepMissing));
  if (typeof value === "object" && value !== null) {
    const out: JsonObject = {};
    // Defined, not assigned: a key "__proto__" stays a key, for the check that refuses it.
    for (const [key, item] of Object.entries(value))
      define(out, key, expandEnv(item, env, file, memberPath(path, key), onReference, keepMissing));
    return out;
  }
  return value;
}

function expandString(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  file: string,
  path: string,
  onReference: OnReference | undefined,
  keepMissing = false,
): string {
  let out = "";
  let i = 0;
  for (;;) {
    const start = text.indexOf("${", i);
    if (start === -1) return out + text.slice(i);
    out += text.slice(i, start);
    // In a server that is not run (disabled, or not the one chosen) it is left as written, as a variable not set is.
    if (text.startsWith("${input:", start) && !keepMissing)
      throw new NormalizerError(
        "CONFIG_INVALID",
        `${file}: ${path} has VS Code's \${input:…}, which asks the user for a value: mcp-normalizer asks ` +
          "no one — write the value, or ${VAR} to read it from the environment",
        { file, path },
      );
    const reference = readReference(text, start);
    if (reference === undefined) {
      // `${NAME` with no `}` after it at all is a reference cut short, not text: sending it
      // literally (as a token, a header) would fail far from the typo.
      const name = NAME.exec(text.slice(start + 2, start + 2 + 256))?.[0];
      if (name !== undefined && !text.includes("}", start)) {
        const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
        throw new NormalizerError(
          "CONFIG_INVALID",
          `${file}: ${path} has \${${shown} with no closing "}" (write \${${shown}} to read the variable; a value ` +
            `that must hold "\${" without one can come from a variable itself)`,
          { file, path, variable: shown },
        );
      }
      out += "${";
      i = start + 2;
      continue;
    }
    onReference?.(reference.name, path);
    const found = env[reference.name];
    if (found !== undefined && found !== "") out += found;
    else if (reference.fallback !== undefined)
      out += expandString(reference.fallback, env, file, path, onReference, keepMissing);
    else if (keepMissing) out += text.slice(start, reference.end);
    else
      throw new NormalizerError(
        "CONFIG_ENV_MISSING",
        `${file}: ${path} uses \${${reference.name}}, but the environment variable ${reference.name} is ` +
          `${found === "" ? "empty" : "not set"} (a default: \${${reference.name}:-value})` +
          (EDITOR_VARIABLES.has(reference.name)
            ? `; \${${reference.name}} is an editor's own variable, not expanded here: give the path itself`
            : ""),
        { file, path, variable: reference.name },
      );
    i = reference.end;
  }
}

/**
 * `${NAME}` or `${NAME:-default}` at `start` (the default up to its matching brace), else
 * undefined. `${env:NAME}` — Cursor's and VS Code's form — reads NAME too, so their blocks paste
 * in as they are.
 */
function readReference(text: string, start: number): { name: string; fallback?: string; end: number } | undefined {
  // `${env:-x}` is a variable named env with a default: the prefix is followed by a name.
  const from =
    text.startsWith("env:", start + 2) && NAME.test(text.slice(start + 6, start + 7)) ? start + 6 : start + 2;
  const name = NAME.exec(text.slice(from, from + 256))?.[0];
  if (name === undefined) return undefined;
  let i = from + name.length;
  if (text[i] === "}") return { name, end: i + 1 };
  if (!text.startsWith(":-", i)) return undefined;
  i += 2;
  const fallbackFrom = i;
  let depth = 0;
  for (; i < text.length; i++) {
    if (text.startsWith("${", i)) {
      depth++;
      i++;
    } else if (text[i] === "}") {
      if (depth === 0) return { name, fallback: text.slice(fallbackFrom, i), end: i + 1 };
      depth--;
    }
  }
  return undefined;
}
