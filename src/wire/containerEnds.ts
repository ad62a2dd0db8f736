/**
 * Where each object and array of a JSON text ends, found in one pass. Taking a deeply nested
 * text apart level by level would otherwise scan each level's whole subtree again to find where
 * it ends: time proportional to depth × size, seconds for a few hundred levels of megabytes.
 */
import { type ContainerEndOf, stringEnd } from "./jsonText.js";

/** A lookup of the end of the container opening at an index of `text` (valid JSON text). */
export function containerEnds(text: string): ContainerEndOf {
  // Opens are met in order, so `starts` is sorted: a lookup is a binary search.
  const starts: number[] = [];
  const ends: number[] = [];
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i) - 1;
    else if (c === 0x7b || c === 0x5b) {
      open.push(starts.length);
      starts.push(i);
      ends.push(text.length);
    } else if (c === 0x7d || c === 0x5d) {
      const index = open.pop();
      if (index !== undefined) ends[index] = i + 1;
    }
  }
  return (at) => {
    let low = 0;
    let high = starts.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const start = starts[mid]!;
      if (start === at) return ends[mid]!;
      if (start < at) low = mid + 1;
      else high = mid - 1;
    }
    return text.length;
  };
}
