/**
 * The children SVGs are drawn in are kept for the next SVG: one after another in the same child,
 * a child given up or holding too much memory never reused, one waiting for work ended after a
 * while and never keeping its process running.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SvgRenderers } from "../../src/fit/images/svgRenderers.js";
import { ROOT } from "../helpers/paths.js";
import { SLOW_SVG, svgRenderersOf } from "../helpers/svgRenderers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const OPTIONS = { font: { loadSystemFonts: false }, maxDimension: 64 };
const icon = (r: number) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="32"><circle cx="16" cy="16" r="${r}" fill="red"/></svg>`;

async function waitFor(check: () => boolean, ms = 5_000): Promise<boolean> {
  for (const deadline = Date.now() + ms; !check() && Date.now() < deadline; ) await sleep(50);
  return check();
}

const pools: SvgRenderers[] = [];
function pool(options: ConstructorParameters<typeof SvgRenderers>[0] = {}): SvgRenderers {
  const renderers = new SvgRenderers({ idleMs: 60_000, ...options });
  pools.push(renderers);
  return renderers;
}

afterEach(async () => {
  for (const renderers of pools.splice(0)) renderers.close();
  await waitFor(() => svgRenderersOf().length === 0);
});

describe("the children SVGs are drawn in", () => {
  it("draws one SVG after another in the same child, which then waits for the next", async () => {
    const renderers = pool();
    const first = await renderers.render(icon(10), OPTIONS);
    expect(first).toMatchObject({ width: 64, height: 32, sourceWidth: 64, sourceHeight: 32 });
    const after = svgRenderersOf();
    expect(after).toHaveLength(1);
    expect(renderers.waiting).toBe(1);
    for (let r = 1; r <= 20; r++) {
      const drawn = await renderers.render(icon(r), OPTIONS);
      expect(drawn.png.readUInt32BE(0)).toBe(0x89504e47);
    }
    expect(svgRenderersOf()).toEqual(after);
  });

  it("keeps drawing in the same child after an SVG that does not parse", async () => {
    const renderers = pool();
    await renderers.render(icon(5), OPTIONS);
    const before = svgRenderersOf();
    await expect(renderers.render("<svg", OPTIONS)).rejects.toThrow(/SVG does not parse/);
    await expect(renderers.render("<html></html>", OPTIONS)).rejects.toThrow(/SVG does not parse/);
    expect(await renderers.render(icon(7), OPTIONS)).toMatchObject({ width: 64, height: 32 });
    expect(svgRenderersOf()).toEqual(before);
  });

  it("never reuses a child whose drawing was given up: it is killed, the next SVG gets another", async () => {
    const renderers = pool();
    await renderers.render(icon(5), OPTIONS);
    const [idle] = svgRenderersOf();
    const giveUp = new AbortController();
    const slow = renderers.render(SLOW_SVG, { ...OPTIONS, maxDimension: 1500 }, giveUp.signal);
    await sleep(300);
    giveUp.abort();
    await expect(slow).rejects.toThrow(/given up \(limits\.fitTimeoutMs\)/);
    expect(await waitFor(() => !svgRenderersOf().includes(idle!))).toBe(true);
    expect(await renderers.render(icon(9), OPTIONS)).toMatchObject({ width: 64, height: 32 });
    const [next] = svgRenderersOf();
    expect(next).toBeDefined();
    expect(next).not.toBe(idle);
  }, 20_000);

  it("a child killed as its answer was already on the way is not kept: the next SVG draws in another", async () => {
    const renderers = pool();
    await renderers.render(icon(1), OPTIONS);
    const giveUp = new AbortController();
    const failing = renderers.render("<svg", OPTIONS, giveUp.signal);
    // The child answers (it does not parse) while this thread is busy; the fit is given up before
    // that answer is read.
    for (const until = Date.now() + 500; Date.now() < until; );
    giveUp.abort();
    await expect(failing).rejects.toThrow();
    expect(await renderers.render(icon(2), OPTIONS)).toMatchObject({ width: 64, height: 32 });
  });

  it("ends a child that holds more than retireAboveBytes once done", async () => {
    const renderers = pool({ retireAboveBytes: 1 });
    expect(await renderers.render(icon(5), OPTIONS)).toMatchObject({ width: 64 });
    expect(renderers.waiting).toBe(0);
    expect(await waitFor(() => svgRenderersOf().length === 0)).toBe(true);
  });

  it("keeps no more than keptIdle children waiting", async () => {
    const renderers = pool({ keptIdle: 2 });
    await Promise.all(Array.from({ length: 5 }, (_, i) => renderers.render(icon(i + 1), OPTIONS)));
    expect(renderers.waiting).toBe(2);
    expect(await waitFor(() => svgRenderersOf().length === 2)).toBe(true);
  });

  it("ends a child left waiting longer than idleMs", async () => {
    const renderers = pool({ idleMs: 200 });
    await renderers.render(icon(5), OPTIONS);
    expect(svgRenderersOf()).toHaveLength(1);
    expect(await waitFor(() => svgRenderersOf().length === 0)).toBe(true);
    expect(renderers.waiting).toBe(0);
    // And the next SVG starts one again.
    expect(await renderers.render(icon(6), OPTIONS)).toMatchObject({ width: 64 });
  });

  it("a child waiting for work neither keeps its process running nor outlives it", async () => {
    const module = join(ROOT, "dist", "fit", "images", "svgRenderers.js");
    const script = `
      const { renderSvgInChild } = await import(${JSON.stringify(module)});
      const { execFileSync } = await import("node:child_process");
      await renderSvgInChild(${JSON.stringify(icon(4))}, ${JSON.stringify(OPTIONS)});
      const out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
      console.log(out.split("\\n").filter((line) => line.includes("--input-type=commonjs")).map((line) => Number.parseInt(line, 10)).join(","));
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    const exited = await Promise.race([
      new Promise((resolve) => child.once("exit", () => resolve("exited"))),
      sleep(8_000).then(() => "still running"),
    ]);
    child.kill("SIGKILL");
    expect(exited).toBe("exited");
    const renderers = out.trim().split(",").filter(Boolean).map(Number);
    expect(renderers).toHaveLength(1);
    const gone = await waitFor(() => {
      try {
        process.kill(renderers[0]!, 0);
        return false;
      } catch {
        return true;
      }
    });
    expect(gone, "the renderer outlived its process").toBe(true);
  }, 20_000);
});
