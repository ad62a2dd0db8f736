/** Reading Prometheus text exposition in tests. */

/** The value of one series in Prometheus text, or 0 when absent. */
export function series(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).match(/^\{(.*)\}/)?.[1] ?? "";
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`)))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}
