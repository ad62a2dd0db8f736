/**
 * The fit layer on one result: embedded resources inlined, over-long tool text cut into pages,
 * images fitted. Inlining and cutting are synchronous; images need sharp (a header read at
 * least), so a result with images to look at comes back as a promise — and only such a result:
 * everything else is answered synchronously, with no promise made.
 */
import type { ChangeRecord } from "../normalize/change.js";
import { decodeStrictBase64, decodeStrictBase64Ascii, encodeBase64 } from "../normalize/base64.js";
import { isJsonObject, mapChanged, rebuild, type JsonObject } from "../normalize/objects.js";
import { isRawJsonString } from "../wire/rawJson.js";
import { inlineResource } from "./embedded.js";
import type { FitPolicy } from "./fitPolicy.js";
import type { ImageFit } from "./images/fitImage.js";
import { fitRecord } from "./records.js";
import type { FitRuntime } from "./runtime.js";
import type { ImageSettings } from "./settings.js";
import { cutContent } from "./spill/cutResult.js";
import type { SpillStore } from "./spill/spillStore.js";

/** Methods whose results the fit layer may change. */
export const FIT_METHODS: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read"]);

export interface FitSession {
  readonly policy: FitPolicy;
  readonly runtime: FitRuntime;
  /** This session's pages; null when nothing may be cut. */
  readonly store: SpillStore | null;
  /** Aborted when the session ends: its image fits still running are given up (a drawing killed). */
  readonly ended?: AbortSignal;
}

export interface Fitted {
  /** The original result itself when nothing changed. */
  readonly value: unknown;
  readonly changes: ChangeRecord[];
}

interface ImageJob {
  /** The block (image block, embedded resource block, or resources/read entry) to replace. */
  readonly block: JsonObject;
  readonly path: string;
  /** The resource the image is (or was inlined from), for rules and the record. */
  readonly uri: string | null;
  readonly settings: ImageSettings;
  readonly dryRun: boolean;
  readonly kind: "image" | "resource" | "entry";
  /**
   * An SVG a resource holds as `text` (the engine makes an SVG blob text: SVG is text) — its
   * bytes are that text's, and fitted it becomes a `blob` of the new image.
   */
  readonly svgText?: boolean;
  /** An embedded resource to inline once drawn (`embeddedResources: "inline"`); not drawn, it stays as it is. */
  readonly inline?: boolean;
  /**
   * The settings for the image as what its bytes say it is: rules match declared types, and a
   * server may label an SVG `image/png`. Null when that type's rules turn images off.
   */
  readonly settingsAs: (mime: string) => ImageSettings | null;
}

/** `givenUp`: aborted when nobody waits for this result any more (its request cancelled). */
export function fitResult(
  method: string,
  result: unknown,
  tool: string | null,
  session: FitSession,
  givenUp?: AbortSignal,
): Fitted | Promise<Fitted> {
  if (!isJsonObject(result)) return { value: result, changes: [] };
  const changes: ChangeRecord[] = [];
  const jobs: ImageJob[] = [];
  // An image block inlined from an embedded resource → that resource's URI (rules match it).
  const inlinedFrom = new WeakMap<JsonObject, string>();
  let value: JsonObject = result;
  switch (method) {
    case "tools/call": {
      const content = result.content;
      if (!Array.isArray(content)) return { value: result, changes };
      let list = mapChanged(content, (block, i) =>
        inlineBlock(block, `content[${i}]`, tool, session.policy, changes, inlinedFrom),
      );
      for (const [i, block] of list.entries())
        collectImage(block, `content[${i}]`, tool, session.policy, jobs, inlinedFrom);
      const cut = session.policy.for(null, null, tool);
      if (cut.maxResultBytes !== null) {
        list = cutContent(
          list,
          {
            maxBytes: cut.maxResultBytes,
            store: cut.dryRun ? null : session.store,
            holder: session.store?.holder,
            dryRun: cut.dryRun,
            ttlMs: session.runtime.limits.spillTtlMs,
          },
          changes,
        );
      }
      if (list !== content) value = rebuild(result, { content: list });
      break;
    }
    case "prompts/get": {
      const messages = result.messages;
      if (!Array.isArray(messages)) return { value: result, changes };
      const next = mapChanged(messages, (message, m) => {
        if (!isJsonObject(message)) return message;
        const content = message.content;
        const path = `messages[${m}].content`;
        let out: unknown;
        if (Array.isArray(content)) {
          out = mapChanged(content, (block, i) =>
            inlineBlock(block, `${path}[${i}]`, null, session.policy, changes, inlinedFrom),
          );
          for (const [i, block] of (out as unknown[]).entries())
            collectImage(block, `${path}[${i}]`, null, session.policy, jobs, inlinedFrom);
        } else {
          out = inlineBlock(content, path, null, session.policy, changes, inlinedFrom);
          collectImage(out, path, null, session.policy, jobs, inlinedFrom);
        }
        return out === content ? message : rebuild(message, { content: out });
      });
      if (next !== messages) value = rebuild(result, { messages: next });
      break;
    }
    case "resources/read": {
      if (!session.policy.mayFitResources || !Array.isArray(result.contents)) return { value: result, changes };
      for (const [i, entry] of result.contents.entries())
        collectEntryImage(entry, `contents[${i}]`, session.policy, jobs);
      break;
    }
    default:
      return { value: result, changes };
  }
  if (jobs.length === 0) return { value, changes };
  return runImages(jobs, session.runtime, session.ended, givenUp).then((outcomes) => {
    const replacements = new Map<JsonObject, JsonObject>();
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!;
      const outcome = outcomes[i]!;
      changes.push(...outcome.records);
      if (outcome.block !== null && !job.dryRun) replacements.set(job.block, outcome.block);
    }
    return { value: replacements.size === 0 ? value : replaceBlocks(method, value, replacements), changes };
  });
}

/** An embedded resource block inlined when its settings say so (dryRun: recorded, not made). */
function inlineBlock(
  block: unknown,
  path: string,
  tool: string | null,
  policy: FitPolicy,
  changes: ChangeRecord[],
  inlinedFrom: WeakMap<JsonObject, string>,
): unknown {
  if (!isJsonObject(block) || block.type !== "resource" || !isJsonObject(block.resource)) return block;
  const resource = block.resource;
  const uri = typeof resource.uri === "string" ? resource.uri : null;
  const settings = policy.for(uri, resource.mimeType, tool);
  if (settings.embeddedResources !== "inline") return block;
  // An SVG with images on is an image to the host: inlined once drawn (runImages), not as its markup.
  if (settings.images !== null && isSvgText(resource)) return block;
  const next = inlineResource(block, path, settings.dryRun, changes);
  if (next === null || settings.dryRun) return block;
  if (uri !== null) inlinedFrom.set(next, uri);
  return next;
}

function collectImage(
  block: unknown,
  path: string,
  tool: string | null,
  policy: FitPolicy,
  jobs: ImageJob[],
  inlinedFrom: WeakMap<JsonObject, string>,
): void {
  if (!isJsonObject(block)) return;
  if (block.type === "image" && isPayload(block.data)) {
    const uri = inlinedFrom.get(block) ?? null;
    const settings = policy.for(uri, block.mimeType, tool);
    if (settings.images !== null)
      jobs.push({
        block,
        path,
        uri,
        settings: settings.images,
        dryRun: settings.dryRun,
        kind: "image",
        settingsAs: (mime) => policy.for(uri, mime, tool).images,
      });
  } else if (
    block.type === "resource" &&
    isJsonObject(block.resource) &&
    (isImageBlob(block.resource) || isSvgText(block.resource))
  ) {
    const resource = block.resource;
    const uri = typeof resource.uri === "string" ? resource.uri : null;
    const settings = policy.for(uri, resource.mimeType, tool);
    const svgText = isSvgText(resource);
    if (settings.images !== null)
      jobs.push({
        block,
        path: `${path}.resource`,
        uri,
        settings: settings.images,
        dryRun: settings.dryRun,
        kind: "resource",
        svgText,
        inline: svgText && settings.embeddedResources === "inline",
        settingsAs: (mime) => policy.for(uri, mime, tool).images,
      });
  }
}

function collectEntryImage(entry: unknown, path: string, policy: FitPolicy, jobs: ImageJob[]): void {
  if (!isJsonObject(entry) || !(isImageBlob(entry) || isSvgText(entry))) return;
  const uri = typeof entry.uri === "string" ? entry.uri : null;
  const settings = policy.for(uri, entry.mimeType, null);
  if (settings.images?.resources === true)
    jobs.push({
      block: entry,
      path,
      uri,
      settings: settings.images,
      dryRun: settings.dryRun,
      kind: "entry",
      svgText: isSvgText(entry),
      settingsAs: (mime) => {
        const images = policy.for(uri, mime, null).images;
        return images?.resources === true ? images : null;
      },
    });
}

function isPayload(value: unknown): boolean {
  return typeof value === "string" || isRawJsonString(value);
}

function isImageBlob(entry: JsonObject): boolean {
  return isPayload(entry.blob) && typeof entry.mimeType === "string" && /^\s*image\//i.test(entry.mimeType);
}

/** A resource holding an SVG as its text (a server's text, or a blob the engine found to be text). */
function isSvgText(entry: JsonObject): boolean {
  return (
    isPayload(entry.text) &&
    !isPayload(entry.blob) &&
    typeof entry.mimeType === "string" &&
    /^\s*image\/svg\+xml\s*(;|$)/i.test(entry.mimeType)
  );
}

interface JobOutcome {
  readonly block: JsonObject | null;
  readonly records: readonly ChangeRecord[];
}

/** `ended`: the session's end (its images take turns with other sessions'); `cancelled`: its request's cancel. */
function runImages(
  jobs: readonly ImageJob[],
  runtime: FitRuntime,
  ended?: AbortSignal,
  cancelled?: AbortSignal,
): Promise<JobOutcome[]> {
  return Promise.all(
    jobs.map(async (job): Promise<JobOutcome> => {
      const holder = job.kind === "resource" ? (job.block.resource as JsonObject) : job.block;
      const key = job.kind === "image" ? "data" : "blob";
      const payload = job.svgText === true ? holder.text : holder[key];
      const bytes =
        job.svgText === true
          ? Buffer.from(isRawJsonString(payload) ? payload.value() : (payload as string), "utf8")
          : isRawJsonString(payload)
            ? payload.plainAscii() === null
              ? decodeStrictBase64(payload.value())
              : decodeStrictBase64Ascii(payload.plainAscii()!)
            : decodeStrictBase64(payload as string);
      const uri = job.uri;
      // Measured as the engine measures the entry at the same path: an embedded resource's
      // record is the resource's size, not that of the block around it.
      const record = (
        action: ChangeRecord["action"],
        reason: string,
        after: JsonObject,
        mimeAfter?: unknown,
      ): ChangeRecord =>
        fitRecord({
          action,
          path: job.path,
          uri,
          before: holder,
          after,
          mimeBefore: holder.mimeType,
          mimeAfter,
          reason,
          applied: !job.dryRun,
        });
      if (bytes === null)
        return {
          block: null,
          records: [record("warn-image-undecodable", "image data is not standard base64", holder)],
        };
      // Rules for what the bytes are apply too: an SVG labelled image/png is an SVG to them.
      const fit: ImageFit = await runtime.images.fit(bytes, job.settings, job.settingsAs, ended, cancelled);
      if (fit.kind === "keep") return { block: null, records: [] };
      if (fit.kind === "warn") return { block: null, records: [record(fit.action, fit.reason, holder)] };
      const data = encodeBase64(fit.bytes);
      if (job.inline === true) return inlineDrawn(job, bytes, data, fit.mime, fit.reason);
      // An SVG that was text becomes a blob of the image drawn from it, in the text's place.
      const replaced =
        job.svgText === true
          ? rebuild(holder, { blob: data, mimeType: fit.mime }, ["text", "blob"])
          : rebuild(holder, { [key]: data, mimeType: fit.mime });
      const fitted = record("fit-image", fit.reason, replaced, fit.mime);
      return {
        block: job.kind === "resource" ? rebuild(job.block, { resource: replaced }) : replaced,
        records: [fitted],
      };
    }),
  );
}

/**
 * An SVG resource inlined once drawn, recorded as an image blob inlined then fitted is: the
 * block inlined with the SVG as its image data, then that image fitted — two records of one
 * entry at the block's path, the second chained to the first (one entry, as reports count it).
 */
function inlineDrawn(job: ImageJob, svg: Buffer, data: string, mime: string, reason: string): JobOutcome {
  const resource = job.block.resource as JsonObject;
  const asBlob = rebuild(resource, { blob: encodeBase64(svg) }, ["text", "blob"]);
  const path = job.path.slice(0, -".resource".length);
  const records: ChangeRecord[] = [];
  const inlined = inlineResource(rebuild(job.block, { resource: asBlob }), path, job.dryRun, records, job.block)!;
  const drawn = rebuild(inlined, { data, mimeType: mime });
  records.push(
    fitRecord({
      action: "fit-image",
      path,
      uri: job.uri,
      before: inlined,
      after: drawn,
      mimeBefore: inlined.mimeType,
      mimeAfter: mime,
      reason,
      applied: !job.dryRun,
    }),
  );
  return { block: drawn, records };
}

/** The result with each fitted block put in its place (blocks are found by identity). */
function replaceBlocks(
  method: string,
  result: JsonObject,
  replacements: ReadonlyMap<JsonObject, JsonObject>,
): JsonObject {
  const swap = (item: unknown): unknown => (isJsonObject(item) ? (replacements.get(item) ?? item) : item);
  const list = (key: string, map: (item: unknown) => unknown): JsonObject => {
    const items = result[key];
    if (!Array.isArray(items)) return result;
    const next = mapChanged(items, map);
    return next === items ? result : rebuild(result, { [key]: next });
  };
  switch (method) {
    case "tools/call":
      return list("content", swap);
    case "resources/read":
      return list("contents", swap);
    case "prompts/get":
      return list("messages", (message) => {
        if (!isJsonObject(message)) return message;
        const content = message.content;
        const next = Array.isArray(content) ? mapChanged(content, swap) : swap(content);
        return next === content ? message : rebuild(message, { content: next });
      });
    default:
      return result;
  }
}

/**
 * The engine's records and the fit layer's for one result, as one list: an engine record that
 * only says "unchanged" for a block the fit layer then changed is left out (one entry, one record).
 */
export function mergeChanges(engine: readonly ChangeRecord[], fitted: readonly ChangeRecord[]): ChangeRecord[] {
  if (fitted.length === 0) return [...engine];
  // Data that is not base64 is the engine's to report; the fit layer says it again only when
  // the engine did not look (its media checks turned off).
  const notBase64 = new Set(engine.filter((c) => c.action === "skip-invalid-base64").map((c) => c.path));
  const fits = fitted.filter((c) => c.action !== "warn-image-undecodable" || !notBase64.has(c.path));
  const paths = new Set(fits.map((change) => change.path));
  const covered = (path: string): boolean => {
    if (paths.has(path)) return true;
    const dot = path.lastIndexOf(".");
    return dot > 0 && paths.has(path.slice(0, dot));
  };
  const kept = engine.filter((change) => change.action !== "none" || !covered(change.path));
  // A fit on the very entry a record before it changed (the same path: the same thing measured,
  // its bytes before what that record left): one entry, changed twice.
  // Each chained record comes right after the one it continues (a log reader pairs them so).
  const changed = new Set(kept.filter((change) => change.action !== "none").map((change) => change.path));
  const after = new Map<string, ChangeRecord[]>();
  const rest: ChangeRecord[] = [];
  for (const change of fits) {
    if (!changed.has(change.path)) {
      changed.add(change.path);
      rest.push(change);
      continue;
    }
    const list = after.get(change.path) ?? [];
    list.push({ ...change, chained: true });
    after.set(change.path, list);
  }
  const merged: ChangeRecord[] = [];
  for (const change of [...kept, ...rest]) {
    merged.push(change);
    const continued = change.action === "none" ? undefined : after.get(change.path);
    if (continued !== undefined) merged.push(...continued);
    after.delete(change.path);
  }
  return merged;
}
