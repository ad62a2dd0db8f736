export type { ChangeAction, ChangeRecord, NormalizationEvent } from "./change.js";
export { CHANGE_ACTIONS, WARNING_ACTIONS, isChange } from "./change.js";
export { normalizeContents, type NormalizedContents } from "./contents.js";
export { normalizeResourceEntry, type EntryResult } from "./entry.js";
export { normalizeMediaBlock, normalizeResourceLink } from "./media.js";
export { parseMediaType, formatMediaType, type MediaType } from "./mediaType.js";
export {
  Policy,
  type PolicyInput,
  type PolicyOptions,
  type PolicySettings,
  type PolicyRule,
  type ResolvedPolicy,
} from "./policy.js";
export {
  normalizeResult,
  normalizeRequestParams,
  RESULT_METHODS,
  REQUEST_METHODS,
  type NormalizedValue,
} from "./result.js";
export { normalizeMessage, type NormalizedMessage } from "./message.js";
export { detectSignature, type Signature } from "./signature.js";
