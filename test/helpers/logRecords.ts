/**
 * Lines of a normalization log as `report` reads them: one record of an unwrapped text blob,
 * with what a test wants to vary.
 */
export function unwrappedRecordLine(
  fields: { server?: string; uri?: string; bytesBefore?: number; bytesAfter?: number } = {},
): string {
  const bytesBefore = fields.bytesBefore ?? 30;
  const bytesAfter = fields.bytesAfter ?? 10;
  return `${JSON.stringify({
    msg: "normalized",
    server: fields.server ?? "s",
    method: "resources/read",
    uri: fields.uri ?? "x://a",
    action: "unwrap-blob",
    mimeBefore: "text/plain",
    mimeAfter: "text/plain",
    bytesBefore,
    bytesAfter,
    saved: bytesBefore - bytesAfter,
  })}\n`;
}

/** The proxy's JSON log lines of one level in what it wrote to stderr (other lines skipped). */
export function logLinesAt(stderr: string, level: string): Array<Record<string, unknown>> {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.level === level);
}
