/**
 * sharp, loaded on first use: a proxy with image fitting off never loads its native code. Its
 * operation cache is turned off (it keeps recent inputs around for file-based pipelines; the
 * proxy only ever sees each image once). resvg is loaded only by the child processes SVGs are
 * drawn in (svgRenderers.ts).
 */
import type SharpModule from "sharp";

export type Sharp = typeof SharpModule;

let sharpLoading: Promise<Sharp> | undefined;

export function loadSharp(): Promise<Sharp> {
  sharpLoading ??= import("sharp").then((module) => {
    const sharp = module.default;
    sharp.cache(false);
    return sharp;
  });
  return sharpLoading;
}
