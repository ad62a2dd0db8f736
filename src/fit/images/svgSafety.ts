/**
 * SVG made safe to render: nothing in it may make the renderer read a file or the network.
 *
 * resvg never fetches URLs, but it does read local files named by `href` (absolute paths, and
 * paths relative to the working directory), and a nested SVG in a `data:` URI is rendered with
 * the same rules. So every `href` that is not a fragment (`#id`) or an inline raster image
 * (`data:image/png|jpeg|gif|webp`) is pointed at `#`, every CSS `url(…)` that is not a fragment
 * likewise, and a document type declaration is removed whole (its entities could spell out any
 * of the above where a pattern cannot see it; an SVG that then uses an entity fails to parse
 * and passes unchanged).
 */

const DOCTYPE = /<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>/gi;
const HREF = /(\s(?:[A-Za-z_][\w.-]*:)?href\s*=\s*)(["'])([\s\S]*?)\2/gi;
const CSS_URL = /url\(\s*(["']?)([^)]*?)\1\s*\)/gi;
const SAFE_DATA = /^data:image\/(?:png|jpeg|jpg|gif|webp)[;,]/i;

export interface SafeSvg {
  readonly svg: string;
  /** References pointed at `#` (and a doctype removed), for the record's reason. */
  readonly neutralized: number;
}

export function neutralizeSvg(source: string): SafeSvg {
  let neutralized = 0;
  let svg = source.replace(DOCTYPE, () => {
    neutralized++;
    return "";
  });
  svg = svg.replace(HREF, (whole, lead: string, quote: string, value: string) => {
    const target = value.trim();
    if (target.startsWith("#") || SAFE_DATA.test(target)) return whole;
    neutralized++;
    return `${lead}${quote}#${quote}`;
  });
  svg = svg.replace(CSS_URL, (whole, _quote: string, value: string) => {
    if (value.trim().startsWith("#")) return whole;
    neutralized++;
    return "url(#)";
  });
  return { svg, neutralized };
}

/** Text needs fonts: system fonts are loaded only for an SVG that has text to draw. */
export function svgHasText(svg: string): boolean {
  return /<(?:[\w-]+:)?text[\s>]/i.test(svg);
}
