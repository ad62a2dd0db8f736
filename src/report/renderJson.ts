/** The report model as JSON: the documented, stable machine format (`schemaVersion`, see model.ts). */
import type { ReportModel } from "./model.js";

export function renderJson(model: ReportModel): string {
  return `${JSON.stringify(model, null, 2)}\n`;
}
