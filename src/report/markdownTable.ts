/**
 * Markdown table pieces shared by the report renderers. What goes into a cell is a server's
 * (URIs, mimeTypes, error messages): it must stay text wherever the report is read — a terminal
 * (no escape sequences reach it: control characters are shown as symbols) and a Markdown
 * renderer (no HTML, link or emphasis of its own).
 */

export function table(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ];
}

/** Characters that would act in Markdown (HTML, links, emphasis, code, the cell's end): escaped. */
const MARKDOWN_ACTIVE = /[\\|<>&[\]`*_~]/g;
/** C0 and C1 controls, DEL, and the bidirectional overrides that reorder what a terminal shows. */
function isInvisible(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** `text` with line breaks as spaces and every other control character as a visible symbol. */
function visible(text: string): string {
  const flat = text.replace(/[\r\n]+/g, " ");
  let out = "";
  let from = 0;
  for (let i = 0; i < flat.length; i++) {
    const code = flat.charCodeAt(i);
    if (!isInvisible(code)) continue;
    const shown =
      code < 0x20
        ? String.fromCharCode(0x2400 + code) // ␀ … ␟
        : code === 0x7f
          ? "\u2421" // ␡
          : `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
    out += flat.slice(from, i) + shown;
    from = i + 1;
  }
  return from === 0 ? flat : out + flat.slice(from);
}

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
