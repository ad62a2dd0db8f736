/** The value at a change record's `path` (`contents[0]`, `content[2].resource`) inside a result. */
const SEGMENT = /([^.[\]]+)|\[(\d+)\]/g;

export function valueAt(root: unknown, path: string): unknown {
  let current: unknown = root;
  for (const match of path.matchAll(SEGMENT)) {
    if (current === null || typeof current !== "object") return undefined;
    const key = match[2] !== undefined ? Number(match[2]) : (match[1] as string);
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}
