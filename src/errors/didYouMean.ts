/**
 * "Did you mean …?" for a name that was not recognised (a flag, a config key): the known name
 * closest to it in edit distance, when it is close enough to be a slip rather than a new word.
 */

/**
 * Edit distance counting a swap of two neighbouring letters as one edit ("prot" → "port"),
 * case-insensitive (a capital letter in the wrong place is a slip too).
 */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const rows: number[][] = [Array.from({ length: y.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      row[j] = best;
    }
    rows.push(row);
  }
  return rows[x.length]![y.length]!;
}

/**
 * The known name closest to `given`, or undefined when none is within a third of its length (at least 1, at most 3
 * edits).
 */
export function closestName(given: string, known: Iterable<string>): string | undefined {
  const allowed = Math.min(3, Math.max(1, Math.floor(given.length / 3)));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    if (name === given) continue;
    const d = distance(given, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return bestDistance <= allowed ? best : undefined;
}

/** `" (did you mean \"x\"?)"` or "". */
export function didYouMean(
  given: string,
  known: Iterable<string>,
  quote: (name: string) => string = (name) => JSON.stringify(name),
): string {
  const best = closestName(given, known);
  return best === undefined ? "" : ` (did you mean ${quote(best)}?)`;
}
