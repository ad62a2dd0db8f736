/**
 * A limit's duration as people read it in a message, exactly as configured: whole minutes as
 * minutes, whole seconds as seconds, the rest in milliseconds (a rounded figure would tell a
 * reader, or a model, it has longer than it has).
 */
export function describeDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
