/** Markdown table pieces shared by the report renderers. */

export function table(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ];
}

/** A table cell: pipes and line breaks would end the cell or the row. */
export function cell(text: string): string {
  return text
    .replace(/\\/g, "\\\\")
    .replace(/\|/g, "\\|")
    .replace(/[\r\n]+/g, " ");
}

export function code(text: string): string {
  return `\`${cell(text).replace(/`/g, "'")}\``;
}
