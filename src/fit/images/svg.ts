/**
 * SVG to PNG with resvg, at most `maxDimension` on the long side (the SVG's own size when it is
 * smaller). The source is neutralized first (svgSafety.ts); its size is read from a parse, so a
 * document declaring 100 000 × 100 000 is drawn at the limit, never at its word. It is drawn in
 * a child process (svgRenderChild.ts), which a fit given up kills.
 */
import { loadResvg } from "./modules.js";
import { ImageRefusal } from "./rawPixels.js";
import { renderSvgInChild } from "./svgRenderChild.js";
import { neutralizeSvg, svgHasText } from "./svgSafety.js";

export interface RenderedSvg {
  readonly png: Buffer;
  readonly width: number;
  readonly height: number;
  /** The SVG's own size (before scaling to the limit). */
  readonly sourceWidth: number;
  readonly sourceHeight: number;
  readonly neutralized: number;
}

export async function renderSvg(bytes: Buffer, maxDimension: number, signal?: AbortSignal): Promise<RenderedSvg> {
  const { Resvg } = await loadResvg();
  const { svg, neutralized, safe } = neutralizeSvg(bytes.toString("utf8"));
  if (!safe) throw new ImageRefusal("warn-image-undecodable", "SVG has a reference that could not be made safe");
  const font = { loadSystemFonts: svgHasText(svg) };
  let width: number;
  let height: number;
  try {
    const parsed = new Resvg(svg, { font: { loadSystemFonts: false } });
    width = parsed.width;
    height = parsed.height;
  } catch (error) {
    throw new ImageRefusal(
      "warn-image-undecodable",
      `SVG does not parse: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!(width > 0 && height > 0)) throw new ImageRefusal("warn-image-undecodable", "SVG has no size");
  const scale = Math.min(1, maxDimension / Math.max(width, height));
  const fitTo =
    width >= height
      ? { mode: "width" as const, value: Math.max(1, Math.round(width * scale)) }
      : { mode: "height" as const, value: Math.max(1, Math.round(height * scale)) };
  try {
    const rendered = await renderSvgInChild(svg, { font, fitTo }, signal);
    return {
      png: rendered.png,
      width: rendered.width,
      height: rendered.height,
      sourceWidth: Math.round(width),
      sourceHeight: Math.round(height),
      neutralized,
    };
  } catch (error) {
    throw new ImageRefusal(
      "warn-image-undecodable",
      `SVG does not render: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
