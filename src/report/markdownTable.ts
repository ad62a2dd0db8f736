/**
 * Markdown table pieces shared by the report renderers. What goes into a cell is a server's
 * (URIs, mimeTypes, error messages): it must stay text wherever the report is read — a terminal
 * (no escape sequences reach it: control characters are shown as symbols) and a Markdown
 * renderer (no HTML, link or emphasis of its own).
 */

import { visible } from "../errors/visible.js";

export function table(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ];
}

/** Characters that would act in Markdown (HTML, links, emphasis, code, the cell's end): escaped. */
const MARKDOWN_ACTIVE = /[\\|<>&[\]`*_~]/g;
/** A table cell of plain text. */
export function cell(text: string): string {
  return visible(text).replace(MARKDOWN_ACTIVE, (c) => `\\${c}`);
}

/**
 * A table cell as a code span: shown as written (a backslash stays one), backticks as `'`, and
 * only the pipe escaped, as tables ask even inside code spans.
 */
export function code(text: string): string {
  return `\`${visible(text).replace(/`/g, "'").replace(/\|/g, "\\|")}\``;
}
