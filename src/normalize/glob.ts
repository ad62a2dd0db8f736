/**
 * URI and tool-name globs of policy rules and `audit --uri`: `*` matches within a path segment,
 * `**` across segments, `?` one character but `/`; anything else is itself. Matched in one pass
 * over the text, keeping the set of pattern positions reached: a regular expression built from
 * the glob backtracks, and a rule with two `**` and a suffix, against a long URI an upstream
 * chose, took time growing with the square of its length on the proxy's one thread.
 */

/** A pattern position: a character's code, or one of these (all below any code). */
const ONE = -1;
const STAR = -2;
const GLOBSTAR = -3;
const SLASH = 0x2f;

export class Glob {
  /** Each position of the pattern: a character's code, ONE, STAR or GLOBSTAR. */
  private readonly tokens: Int32Array;
  /** What every match starts and ends with (the glob's text before its first and after its last wildcard). */
  private readonly prefix: string;
  private readonly suffix: string;
  private readonly wild: boolean;
  /** Between its ends, only `**`: every text with those ends matches. */
  private readonly anything: boolean;

  constructor(readonly source: string) {
    const tokens: number[] = [];
    for (let i = 0; i < source.length; i++) {
      const code = source.charCodeAt(i);
      if (code === 0x2a && source.charCodeAt(i + 1) === 0x2a) {
        tokens.push(GLOBSTAR);
        i++;
      } else if (code === 0x2a) tokens.push(STAR);
      else if (code === 0x3f) tokens.push(ONE);
      else tokens.push(code);
    }
    this.tokens = Int32Array.from(tokens);
    const first = tokens.findIndex((token) => token < 0);
    this.wild = first !== -1;
    const last = tokens.findLastIndex((token) => token < 0);
    this.prefix = this.wild ? String.fromCharCode(...tokens.slice(0, first)) : "";
    this.suffix = this.wild ? String.fromCharCode(...tokens.slice(last + 1)) : "";
    this.anything = this.wild && tokens.slice(first, last + 1).every((token) => token === GLOBSTAR);
  }

  /** Whether the whole of `text` matches. */
  test(text: string): boolean {
    if (!this.wild) return text === this.source;
    // Most texts a rule does not apply to differ at an end: told without a walk.
    if (text.length < this.prefix.length + this.suffix.length) return false;
    if (!text.startsWith(this.prefix) || !text.endsWith(this.suffix)) return false;
    if (this.anything) return true;
    const tokens = this.tokens;
    const size = tokens.length + 1;
    // The step at which each position was last reached, so a position is listed once a step.
    const reached = new Int32Array(size).fill(-1);
    let current = new Int32Array(size);
    let next = new Int32Array(size);
    let count = this.reach(current, 0, reached, 0, 0);
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      const step = i + 1;
      let listed = 0;
      for (let k = 0; k < count; k++) {
        const at = current[k]!;
        if (at === tokens.length) continue;
        const token = tokens[at]!;
        if (token === code || (token === ONE && code !== SLASH))
          listed = this.reach(next, listed, reached, at + 1, step);
        else if (token === GLOBSTAR || (token === STAR && code !== SLASH))
          listed = this.reach(next, listed, reached, at, step);
      }
      if (listed === 0) return false;
      [current, next] = [next, current];
      count = listed;
    }
    return reached[tokens.length] === text.length;
  }

  /**
   * Lists `at` as reached at `step`, and every position after stars there, which may match
   * nothing; returns the list's new length.
   */
  private reach(list: Int32Array, length: number, reached: Int32Array, at: number, step: number): number {
    let listed = length;
    const tokens = this.tokens;
    for (let position = at; position <= tokens.length; position++) {
      if (reached[position] === step) return listed;
      reached[position] = step;
      list[listed++] = position;
      if (position === tokens.length || (tokens[position] !== STAR && tokens[position] !== GLOBSTAR)) return listed;
    }
    return listed;
  }
}
