// After `npm test`: one plain closing line, "N passed, N failed", from vitest's JSON report
// (CI reads that line; vitest's own summary is formatted for people).
import { readFileSync } from "node:fs";

const file = new URL("../test/artifacts/vitest.json", import.meta.url);
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  process.stderr.write(`test-summary: no vitest report at ${file.pathname}: ${error.message}\n`);
  process.exit(1);
}
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
process.stdout.write(
  `${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n`,
);
process.exit(report.numFailedTests === 0 && report.numPassedTests > 0 ? 0 : 1);
