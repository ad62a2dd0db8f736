/** The ids of given-up requests a session keeps: bounded in number, and let go once their hold is over. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { GivenUpIds } from "../../src/proxy/givenUpIds.js";

describe("GivenUpIds", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds an id until its late answer, then frees it", () => {
    const ids = new GivenUpIds(10, 1000);
    ids.add("a");
    expect(ids.holds("a")).toBe(true);
    expect(ids.holds(1)).toBe(false);
    expect(ids.answered("a")).toBe(true);
    expect(ids.holds("a")).toBe(false);
    expect(ids.answered("a")).toBe(false);
  });

  it("keeps at most max ids, the oldest let go first", () => {
    const ids = new GivenUpIds(3, 60_000);
    for (const id of [1, 2, 3, 4]) ids.add(id);
    expect([1, 2, 3, 4].map((id) => ids.holds(id))).toEqual([false, true, true, true]);
  });

  it("lets an id go once its hold is over, and drops the expired ones when another is added", () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const ids = new GivenUpIds(100, 1000);
    ids.add(1);
    ids.add(2);
    vi.advanceTimersByTime(600);
    ids.add(3);
    vi.advanceTimersByTime(500);
    expect(ids.holds(3)).toBe(true);
    ids.add(4);
    // 1 and 2 are over their hold: gone from the map, not only refused.
    expect(ids.answered(1)).toBe(false);
    expect(ids.answered(2)).toBe(false);
    expect(ids.holds(3)).toBe(true);
    expect(ids.holds(4)).toBe(true);
  });
});
