/**
 * The replay log of a streamable HTTP session: event ids per stream, what a resume gets back,
 * and the byte budget (the oldest events go first, over all the session's streams).
 */
import { describe, expect, it } from "vitest";
import { parseEventId, ReplayLog } from "../../../src/transports/host/replayLog.js";
import { WirePieces } from "../../../src/transports/wireJson.js";
import { collectGarbage } from "../../helpers/gc.js";

describe("ReplayLog", () => {
  it("numbers each stream's events from 1 and gives back those after a position", () => {
    const log = new ReplayLog(1000, 0);
    log.open(3);
    expect(log.position(3)).toBe("3.0");
    expect(log.append(3, "a").id).toBe("3.1");
    expect(log.append(0, "g").id).toBe("0.1");
    expect(log.append(3, "b").id).toBe("3.2");
    expect(log.after(3, 0)).toEqual({
      events: [
        { id: "3.1", wire: "a" },
        { id: "3.2", wire: "b" },
      ],
      missing: 0,
    });
    expect(log.after(3, 1)).toEqual({ events: [{ id: "3.2", wire: "b" }], missing: 0 });
    expect(log.after(3, 2)).toEqual({ events: [], missing: 0 });
    expect(log.after(0, 0)).toEqual({ events: [{ id: "0.1", wire: "g" }], missing: 0 });
  });

  it("counts what an event's text holds in memory: two bytes a character past Latin-1", () => {
    const log = new ReplayLog(1000, 0);
    log.append(1, "abcd");
    log.append(1, "\u00e9t\u00e9");
    expect(log.keptBytes).toBe(7);
    log.append(1, "\u20ac\u20ac");
    expect(log.keptBytes).toBe(11);
  });

  it("keeps nothing of an event it let go in memory (its place is emptied, not just passed)", async () => {
    const log = new ReplayLog(1000, 0);
    const sent: Array<WeakRef<WirePieces>> = [];
    const appendBig = (stream: number): void => {
      const wire = WirePieces.of([Buffer.alloc(600, 0x61)]);
      sent.push(new WeakRef(wire));
      log.append(stream, wire);
    };
    for (let i = 0; i < 10; i++) appendBig(1 + (i % 3));
    await collectGarbage();
    // One 600-byte event fits the 1000-byte budget: only the newest is still held.
    expect(sent.map((ref) => ref.deref() !== undefined)).toEqual([...Array(9).fill(false), true]);
  });

  it("has no position past the last id it gave out, nor in a stream it never had", () => {
    const log = new ReplayLog(1000, 0);
    log.append(1, "a");
    expect(log.after(1, 2)).toBeUndefined();
    expect(log.after(2, 0)).toBeUndefined();
  });

  it("lets the oldest events of the session go past its budget, and counts what a resume misses", () => {
    const log = new ReplayLog(10, 0);
    log.append(1, "aaaa");
    log.append(2, "bbbb");
    log.append(1, "cccc");
    expect(log.keptBytes).toBe(8);
    expect(log.after(1, 0)).toEqual({ events: [{ id: "1.2", wire: "cccc" }], missing: 1 });
    expect(log.after(2, 0)).toEqual({ events: [{ id: "2.1", wire: "bbbb" }], missing: 0 });
    log.append(1, "dddd");
    expect(log.after(2, 0)).toEqual({ events: [], missing: 1 });
  });

  it("never keeps an event larger than the whole budget, but still gives it an id", () => {
    const log = new ReplayLog(4, 0);
    expect(log.append(1, "toolong")).toMatchObject({ id: "1.1", kept: false });
    expect(log.append(1, "ok")).toMatchObject({ id: "1.2", kept: true });
    expect(log.after(1, 0)).toEqual({ events: [{ id: "1.2", wire: "ok" }], missing: 1 });
  });

  it("counts what holds each event, not its text alone", () => {
    const log = new ReplayLog(10_000);
    for (let i = 0; i < 100; i++) log.append(1, "{}");
    expect(log.keptBytes).toBeLessThanOrEqual(10_000);
    expect(log.after(1, 0)!.events.length).toBeLessThan(100);
  });

  it("remembers where a finished stream ended after its record has gone: a resume from there missed nothing", () => {
    const log = new ReplayLog(6, 0);
    log.append(3, "aaa");
    log.finish(3);
    log.append(4, "bbbbbb");
    expect(log.after(3, 1)).toEqual({ events: [], missing: 0 });
    expect(log.after(3, 0)).toEqual({ events: [], missing: 1 });
    expect(log.after(3, 2)).toBeUndefined();
  });

  it("forgets a finished stream once its last event has gone, not before", () => {
    const log = new ReplayLog(6, 0);
    log.append(1, "aaa");
    log.finish(1);
    expect(log.after(1, 0)?.events).toHaveLength(1);
    log.append(2, "bbbb");
    // Gone, but where it ended is remembered.
    expect(log.after(1, 0)).toEqual({ events: [], missing: 1 });
    log.open(5);
    log.finish(5);
    expect(log.after(5, 0)).toEqual({ events: [], missing: 0 });
    expect(log.after(6, 0)).toBeUndefined();
  });

  it("stays bounded through many events", () => {
    const log = new ReplayLog(1000, 0);
    for (let i = 0; i < 50_000; i++) log.append(i % 7, "x".repeat(10));
    expect(log.keptBytes).toBeLessThanOrEqual(1000);
    const replay = log.after(0, 0)!;
    expect(replay.events.length + replay.missing).toBe(Math.ceil(50_000 / 7));
  });
});

describe("parseEventId", () => {
  it("reads STREAM.SEQ and nothing else", () => {
    expect(parseEventId("4.12")).toEqual({ stream: 4, seq: 12 });
    for (const junk of ["", "4", "4.", ".1", "a.1", "4.1.2", " 4.1", `${"1".repeat(20)}.1`, "-1.2"])
      expect(parseEventId(junk)).toBeUndefined();
  });

  it("an answer let go, or never kept, leaves an error for its request in its place", () => {
    const lost = (id: string | number) => `lost ${id}`;
    const log = new ReplayLog(10, 0, lost, 0);
    log.append(1, "n1");
    log.append(1, "answer-1", 7);
    log.append(2, "x".repeat(11), "big");
    log.append(2, "bbbbbbbbbb");
    expect(log.after(1, 0)).toEqual({
      events: [{ id: "1.2", wire: "lost 7" }],
      missing: 1,
    });
    expect(log.after(2, 0)).toEqual({
      events: [
        { id: "2.1", wire: "lost big" },
        { id: "2.2", wire: "bbbbbbbbbb" },
      ],
      missing: 0,
    });
    // A finished stream's record goes once nothing of it is kept; its stand-ins stay with its place.
    log.finish(1);
    expect(log.after(1, 1)).toEqual({ events: [{ id: "1.2", wire: "lost 7" }], missing: 0 });
    expect(log.after(1, 2)).toEqual({ events: [], missing: 0 });
  });

  it("gives the stand-ins back in the order of the answers they stand for; the oldest thing goes first", () => {
    const log = new ReplayLog(8, 0, (id) => `lost ${id}`, 0);
    log.append(1, "aaaa", 1);
    log.append(1, "bbbb");
    log.append(1, "cccc", 2);
    log.append(1, "dddd");
    expect(log.after(1, 0)).toEqual({
      events: [
        { id: "1.1", wire: "lost 1" },
        { id: "1.3", wire: "cccc" },
        { id: "1.4", wire: "dddd" },
      ],
      missing: 1,
    });
  });

  it("a lost answer's stand-in outlasts newer traffic: another call's progress pushes out events, not it", () => {
    const log = new ReplayLog(8192, 0, (id) => `lost ${id}`, 128);
    log.open(2);
    log.append(2, "a".repeat(5000), 7);
    log.finish(2);
    // Another call's 40 KB of progress while the host reconnects.
    for (let i = 0; i < 400; i++) log.append(3, "p".repeat(100));
    expect(log.keptBytes).toBeLessThanOrEqual(8192);
    expect(log.after(2, 0)).toEqual({ events: [{ id: "2.1", wire: "lost 7" }], missing: 0 });
  });

  it("counts its stand-ins against the budget: many answers let go on finished streams stay within it", () => {
    const log = new ReplayLog(1000, 0, (id) => `lost ${id}`, 100);
    for (let stream = 1; stream <= 500; stream++) {
      for (let id = 0; id < 10; id++) log.append(stream, "an answer", id);
      log.finish(stream);
      expect(log.keptBytes).toBeLessThanOrEqual(1000);
    }
    // The newest are kept: the last stream's answers and the stand-ins just before them.
    expect(log.after(500, 0)!.events.map((e) => e.wire)).toEqual(Array(10).fill("an answer"));
    const standIns = [];
    for (let stream = 1; stream < 500; stream++)
      standIns.push(...(log.after(stream, 0)?.events ?? []).filter((e) => String(e.wire).startsWith("lost")));
    expect(standIns.length).toBeLessThanOrEqual(10);
    expect(standIns.length).toBeGreaterThan(0);
  });

  it("keeps no trace of the stand-ins of streams it has forgotten: 100,000 lost answers, a bounded log", () => {
    const log = new ReplayLog(1024 * 1024, 512, (id) => `lost ${id}`);
    for (let stream = 1; stream <= 100_000; stream++) {
      log.append(stream, "x".repeat(2 * 1024 * 1024), stream);
      log.finish(stream);
    }
    expect(log.keptBytes).toBeLessThanOrEqual(1024 * 1024);
    const places = (log as unknown as { lostOrder: unknown[] }).lostOrder.length;
    expect(places).toBeLessThan(5000);
  });
});
