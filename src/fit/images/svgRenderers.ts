/**
 * The children SVGs are drawn in (svgRenderChild.ts), kept for the next SVG once they are done:
 * starting a `node` for each drawing cost far more than drawing an icon, so a result of a few
 * hundred SVGs took longer than `limits.fitTimeoutMs`. A child is not kept when its fit was given
 * up (it is killed), when it holds more than `retireAboveBytes` once done (resvg frees a parsed
 * document only when its collector gets to it), past `keptIdle` children waiting, or after
 * `idleMs` with nothing to draw. A child waiting for work does not keep the process running.
 */
import { createRequire } from "node:module";
import { type RenderedPng, SvgRenderChild, type SvgRenderOptions } from "./svgRenderChild.js";

export type { RenderedPng, SvgRenderOptions } from "./svgRenderChild.js";

export interface SvgRenderersOptions {
  /** How long a child waits for the next SVG before it is ended. */
  readonly idleMs: number;
  /** The most children kept waiting at once. */
  readonly keptIdle: number;
  /** A child holding more resident memory than this once done is ended, not kept. */
  readonly retireAboveBytes: number;
}

const DEFAULTS: SvgRenderersOptions = { idleMs: 10_000, keptIdle: 4, retireAboveBytes: 256 * 1024 * 1024 };

/** Every child of every pool, killed if the process exits first. */
const children = new Set<SvgRenderChild>();
let killedOnExit = false;

let resvgPath: string | undefined;

export class SvgRenderers {
  private readonly options: SvgRenderersOptions;
  private readonly idle: SvgRenderChild[] = [];
  private readonly idleTimers = new Map<SvgRenderChild, NodeJS.Timeout>();

  constructor(options: Partial<SvgRenderersOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** Renders `svg` (already made safe) in a child; rejects when it fails, or is killed by `signal`. */
  async render(svg: string, options: SvgRenderOptions, signal?: AbortSignal): Promise<RenderedPng> {
    if (signal?.aborted) throw new Error("given up before it started");
    const child = this.take();
    const onAbort = (): void => child.kill("given up (limits.fitTimeoutMs)");
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const { rendered, rss } = await child.render(svg, options);
      this.giveBack(child, rss);
      return rendered;
    } catch (error) {
      // An SVG the child could not draw leaves it as able as before.
      if (child.alive) this.giveBack(child, 0);
      throw error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Children waiting for work, for the operators' view and the tests. */
  get waiting(): number {
    return this.idle.length;
  }

  /** Ends every child waiting for work. */
  close(): void {
    for (const child of this.idle.splice(0)) child.kill("ended");
  }

  private take(): SvgRenderChild {
    let child = this.idle.pop();
    while (child !== undefined && !child.alive) child = this.idle.pop();
    if (child !== undefined) {
      clearTimeout(this.idleTimers.get(child));
      this.idleTimers.delete(child);
      child.hold(true);
      return child;
    }
    resvgPath ??= createRequire(import.meta.url).resolve("@resvg/resvg-js");
    child = new SvgRenderChild(resvgPath, (ended) => this.forget(ended));
    children.add(child);
    if (!killedOnExit) {
      killedOnExit = true;
      process.on("exit", () => {
        for (const running of children) running.kill("the process exits");
      });
    }
    return child;
  }

  private giveBack(child: SvgRenderChild, rss: number): void {
    child.hold(false);
    if (rss > this.options.retireAboveBytes || this.idle.length >= this.options.keptIdle) {
      child.kill("ended");
      return;
    }
    this.idle.push(child);
    const timer = setTimeout(() => {
      const at = this.idle.indexOf(child);
      if (at !== -1) this.idle.splice(at, 1);
      child.kill("ended");
    }, this.options.idleMs);
    timer.unref();
    this.idleTimers.set(child, timer);
  }

  private forget(child: SvgRenderChild): void {
    children.delete(child);
    clearTimeout(this.idleTimers.get(child));
    this.idleTimers.delete(child);
    const at = this.idle.indexOf(child);
    if (at !== -1) this.idle.splice(at, 1);
  }
}

const shared = new SvgRenderers();

/** Renders `svg` (already made safe) in one of the process's children; see `SvgRenderers.render`. */
export function renderSvgInChild(svg: string, options: SvgRenderOptions, signal?: AbortSignal): Promise<RenderedPng> {
  return shared.render(svg, options, signal);
}
