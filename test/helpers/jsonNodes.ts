/**
 * A parsed JSON value's nodes as `limits.maxMessageNodes` counts them: every object and array, and
 * every member or element after the first in one (the commas).
 */
export function nodesOf(value: unknown): number {
  const children = Array.isArray(value)
    ? value
    : typeof value === "object" && value !== null
      ? Object.values(value)
      : undefined;
  if (children === undefined) return 0;
  return 1 + Math.max(0, children.length - 1) + children.reduce((sum: number, item) => sum + nodesOf(item), 0);
}
