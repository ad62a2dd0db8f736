/**
 * Text a server chose, made safe to show on a terminal or in a report: line breaks as spaces,
 * every other control character (C0, DEL, C1) and the bidirectional overrides that reorder what a
 * terminal shows as a visible symbol — no escape sequence (colours, titles, links, a cleared
 * screen) and no fake line reaches the reader.
 */

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
export function visible(text: string): string {
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
