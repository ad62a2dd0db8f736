/** `CODE: description` of an OS error, without the path Node appends (the message names the path once). */
export function osReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/, (open|mkdir|write|l?stat|access|scandir|read) '.*'$/, "").replace(/, (write|read)$/, "");
}
