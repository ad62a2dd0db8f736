/** `--format md|json|html` → the renderer. */
import { NormalizerError } from "../errors/NormalizerError.js";
import type { ReportModel } from "./model.js";
import { renderHtml } from "./renderHtml.js";
import { renderJson } from "./renderJson.js";
import { renderMarkdown } from "./renderMarkdown.js";

export type ReportFormat = "md" | "json" | "html";
export const REPORT_FORMATS: readonly ReportFormat[] = ["md", "json", "html"];

export function parseReportFormat(value: string | undefined, flag: string): ReportFormat {
  if (value === undefined) return "md";
  if ((REPORT_FORMATS as readonly string[]).includes(value)) return value as ReportFormat;
  throw new NormalizerError("USAGE", `${flag} expects md, json or html, got ${JSON.stringify(value)}`);
}

export function renderReport(model: ReportModel, format: ReportFormat): string {
  switch (format) {
    case "json":
      return renderJson(model);
    case "html":
      return renderHtml(model);
    case "md":
      return renderMarkdown(model);
  }
}
