/**
 * sharp and resvg, loaded on first use: a proxy with image fitting off never loads their native
 * code. sharp's operation cache is turned off (it keeps recent inputs around for file-based
 * pipelines; the proxy only ever sees each image once).
 */
import type SharpModule from "sharp";
import type * as ResvgModule from "@resvg/resvg-js";

export type Sharp = typeof SharpModule;
export type Resvg = typeof ResvgModule;

let sharpLoading: Promise<Sharp> | undefined;
let resvgLoading: Promise<Resvg> | undefined;

export function loadSharp(): Promise<Sharp> {
  sharpLoading ??= import("sharp").then((module) => {
    const sharp = module.default;
    sharp.cache(false);
    return sharp;
  });
  return sharpLoading;
}

export function loadResvg(): Promise<Resvg> {
  resvgLoading ??= import("@resvg/resvg-js").then(
    (module) => (module as unknown as { default?: Resvg }).default ?? module,
  );
  return resvgLoading;
}
