/**
 * SVG to PNG with resvg, at most `maxDimension` on the long side (the SVG's own size when it is
 * smaller). The source is neutralized first (svgSafety.ts); its size is read from a parse, so a
 * document declaring 100 000 × 100 000 is drawn at the limit, never at its word. Parsed and drawn
 * in a child process (svgRenderers.ts), which a fit given up kills: nothing of the SVG but the
 * safety scan runs on the proxy's thread.
 */
import { ImageRefusal } from "./rawPixels.js";
import { renderSvgInChild } from "./svgRenderers.js";
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
  const { svg, neutralized, safe } = neutralizeSvg(bytes.toString("utf8"));
  if (!safe) throw new ImageRefusal("warn-image-undecodable", "SVG has a reference that could not be made safe");
  try {
    const rendered = await renderSvgInChild(svg, { font: { loadSystemFonts: svgHasText(svg) }, maxDimension }, signal);
    return {
      ...rendered,
      sourceWidth: Math.round(rendered.sourceWidth),
      sourceHeight: Math.round(rendered.sourceHeight),
      neutralized,
    };
  } catch (error) {
    throw new ImageRefusal("warn-image-undecodable", error instanceof Error ? error.message : String(error));
  }
}
