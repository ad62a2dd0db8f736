/** A parsed JSON value's nodes — objects, arrays and object members — as `limits.maxMessageNodes` counts them. */
export function nodesOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, item) => sum + nodesOf(item), 0);
  if (typeof value === "object" && value !== null)
    return 1 + Object.values(value).reduce((sum: number, item) => sum + 1 + nodesOf(item), 0);
  return 0;
}
