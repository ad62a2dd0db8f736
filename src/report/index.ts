export {
  REPORT_SCHEMA_VERSION,
  type EntryFact,
  type GroupRow,
  type ReportModel,
  type Totals,
  type UriRow,
  type ReadFailure,
  type MalformedLine,
} from "./model.js";
export {
  ReportAggregator,
  DEFAULT_MAX_URIS,
  DEFAULT_MAX_GROUP_KEYS,
  DEFAULT_TOP_OFFENDERS,
  type AggregatorOptions,
  type ModelMeta,
} from "./aggregate.js";
export { parseLogLine, type ParsedLine } from "./parseLogLine.js";
export { renderMarkdown } from "./renderMarkdown.js";
export { renderHtml } from "./renderHtml.js";
export { renderJson } from "./renderJson.js";
export { renderReport, parseReportFormat, REPORT_FORMATS, type ReportFormat } from "./render.js";
