/**
 * URI and tool-name globs of policy rules and `audit --uri`: `*` matches within a path segment,
 * `**` across segments, `?` one character but `/`; anything else is itself. Matched in one pass
 * over the text, keeping the set of pattern positions reached: a regular expression built from
 * the glob backtracks, and a rule with two `**` and a suffix, against a long URI an upstream
 * chose, took time growing with the square of its length on the proxy's one thread.
 */

type Token = { readonly kind: "char"; readonly code: number } | { readonly kind: "one" | "star" | "globstar" };

const SLASH = 0x2f;

export class Glob {
  private readonly tokens: readonly Token[];

  constructor(readonly source: string) {
    const tokens: Token[] = [];
    for (let i = 0; i < source.length; i++) {
      const code = source.charCodeAt(i);
      if (code === 0x2a && source.charCodeAt(i + 1) === 0x2a) {
        tokens.push({ kind: "globstar" });
        i++;
      } else if (code === 0x2a) tokens.push({ kind: "star" });
      else if (code === 0x3f) tokens.push({ kind: "one" });
      else tokens.push({ kind: "char", code });
    }
    this.tokens = tokens;
  }

  /** Whether the whole of `text` matches. */
  test(text: string): boolean {
    const tokens = this.tokens;
    const size = tokens.length + 1;
    let active = new Uint8Array(size);
    let next = new Uint8Array(size);
    this.reach(active, 0);
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      next.fill(0);
      let any = false;
      for (let at = 0; at < tokens.length; at++) {
        if (active[at] === 0) continue;
        const token = tokens[at]!;
        if (token.kind === "globstar" || (token.kind === "star" && code !== SLASH)) {
          next[at] = 1;
          any = true;
        } else if ((token.kind === "one" && code !== SLASH) || (token.kind === "char" && token.code === code)) {
          this.reach(next, at + 1);
          any = true;
        }
      }
      if (!any) return false;
      // A star that stays also lets what follows it start at the next character.
      for (let at = 0; at < tokens.length; at++) {
        const kind = tokens[at]!.kind;
        if (next[at] === 1 && (kind === "star" || kind === "globstar")) this.reach(next, at);
      }
      [active, next] = [next, active];
    }
    return active[tokens.length] === 1;
  }

  /** Marks `at` reached, and every position after stars there, which may match nothing. */
  private reach(states: Uint8Array, at: number): void {
    let position = at;
    states[position] = 1;
    while (position < this.tokens.length) {
      const kind = this.tokens[position]!.kind;
      if (kind !== "star" && kind !== "globstar") return;
      position++;
      states[position] = 1;
    }
  }
}
