/**
 * The keys the config schema knows at a JSON path, so an unknown key can be answered with the
 * closest known one (`mcpServer` → did you mean `mcpServers`?). Walks the one zod schema, so it
 * never falls out of step with it.
 */
import type { z } from "zod";
import { ConfigSchema } from "./schema.js";

interface Def {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly options?: readonly z.ZodType[];
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Past optional/default/pipe wrappers to the schema that does the work. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (
    let def = defOf(current);
    def.innerType !== undefined || (def.type === "pipe" && def.in !== undefined);
    def = defOf(current)
  ) {
    current = def.innerType ?? def.in!;
  }
  return current;
}

/** The schemas a value at `path` may match (several inside a union). */
function schemasAt(path: ReadonlyArray<PropertyKey>, root: z.ZodType): z.ZodType[] {
  let current: z.ZodType[] = [root];
  for (const key of path) {
    const next: z.ZodType[] = [];
    for (const candidate of current.flatMap(expand)) {
      const def = defOf(candidate);
      if (def.type === "object" && typeof key === "string" && def.shape?.[key] !== undefined) next.push(def.shape[key]);
      else if (def.type === "record" && def.valueType !== undefined) next.push(def.valueType);
      else if (def.type === "array" && typeof key === "number" && def.element !== undefined) next.push(def.element);
    }
    current = next;
  }
  return current.flatMap(expand);
}

function expand(schema: z.ZodType): z.ZodType[] {
  const inner = unwrap(schema);
  const def = defOf(inner);
  return def.type === "union" && def.options !== undefined ? def.options.flatMap(expand) : [inner];
}

/** Every key an object at `path` may have, per the schema (empty when nothing is known there). */
export function knownKeysAt(path: ReadonlyArray<PropertyKey>, root: z.ZodType = ConfigSchema): string[] {
  const keys = new Set<string>();
  for (const schema of schemasAt(path, root)) for (const key of Object.keys(defOf(schema).shape ?? {})) keys.add(key);
  return [...keys];
}
