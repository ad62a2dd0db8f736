/** The one line `audit -o FILE` prints on stderr: what was read, what failed, what it saves. */
import type { ReportModel } from "../../report/model.js";

export function auditSummary(model: ReportModel): string {
  const t = model.totals;
  const scope = model.scope;
  const listed = model.resources?.listed ?? 0;
  const failed = model.resources?.failed ?? 0;
  const parts = [`audit: ${listed} ${listed === 1 ? "resource" : "resources"} listed, ${failed} failed to read`];
  if (scope !== undefined && !scope.capabilities.resources)
    parts[0] = "audit: no resources capability (resources/list not called)";
  if (scope !== undefined && scope.called > 0)
    parts.push(`${scope.called} tool ${scope.called === 1 ? "call" : "calls"}, ${scope.callFailed} failed`);
  if ((model.skipped?.length ?? 0) > 0) parts.push(`${model.skipped!.length} skipped over --max-bytes`);
  return `${parts.join("; ")}; ${t.bytesBefore} → ${t.bytesAfter} bytes, saved ${t.saved}`;
}
