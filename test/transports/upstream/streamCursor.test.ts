/**
 * The wait before a stream is resumed: it ends with the delay (true), or at once when its abort
 * comes first or has already come (false), for an AbortSignal and a PostAbort alike.
 */
import { describe, expect, it } from "vitest";
import { PostAbort } from "../../../src/transports/upstream/postAbort.js";
import { waitToReconnect } from "../../../src/transports/upstream/streamCursor.js";

const kinds = [
  { kind: "an AbortController", make: () => new AbortController(), signalOf: (c: AbortController) => c.signal },
  { kind: "a PostAbort", make: () => new PostAbort(), signalOf: (c: PostAbort) => c },
] as const;

describe("waitToReconnect", () => {
  for (const { kind, make, signalOf } of kinds) {
    it(`(${kind}) waits the delay, and ends at once when aborted before or during it`, async () => {
      const waited = make() as AbortController & PostAbort;
      const started = Date.now();
      expect(await waitToReconnect(40, signalOf(waited))).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(35);

      const during = make() as AbortController & PostAbort;
      const begun = Date.now();
      const wait = waitToReconnect(10_000, signalOf(during));
      setTimeout(() => during.abort(), 20);
      expect(await wait).toBe(false);
      expect(Date.now() - begun).toBeLessThan(2000);

      const before = make() as AbortController & PostAbort;
      before.abort();
      expect(await waitToReconnect(10_000, signalOf(before))).toBe(false);
    });
  }
});
