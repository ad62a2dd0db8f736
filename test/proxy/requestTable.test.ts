/**
 * The table of requests in flight on one connection, on its own: ids compared as JSON-RPC ids,
 * entries taken out once, kept oldest first.
 */
import { describe, expect, it } from "vitest";
import { inFlight, RequestTable } from "../../src/proxy/requestTable.js";

describe("RequestTable", () => {
  it('1 and "1" are different requests; 0 and -0 are one', () => {
    const table = new RequestTable();
    table.add(inFlight(1, "tools/call"));
    table.add(inFlight("1", "resources/read"));
    expect(table.size).toBe(2);
    expect(table.get(1)?.method).toBe("tools/call");
    expect(table.get("1")?.method).toBe("resources/read");
    table.add(inFlight(0, "ping"));
    expect(table.has(-0)).toBe(true);
    expect(table.take(-0)?.method).toBe("ping");
    expect(table.has(0)).toBe(false);
  });

  it("take hands an entry out once; get leaves it in", () => {
    const table = new RequestTable();
    table.add(inFlight(7, "tools/call"));
    expect(table.get(7)?.id).toBe(7);
    expect(table.size).toBe(1);
    expect(table.take(7)).toMatchObject({ id: 7, method: "tools/call" });
    expect(table.take(7)).toBeUndefined();
    expect(table.size).toBe(0);
  });

  it("the decorator's fields start unset and stay with the entry", () => {
    const table = new RequestTable();
    const entry = inFlight(3, "tasks/result");
    expect(entry).toEqual({ id: 3, method: "tasks/result", resultOf: undefined, tool: undefined });
    table.add(entry);
    const found = table.get(3)!;
    found.resultOf = "tools/call";
    found.tool = "search";
    expect(table.take(3)).toEqual({ id: 3, method: "tasks/result", resultOf: "tools/call", tool: "search" });
  });

  it("keeps entries oldest first, an entry taken out and added again going last", () => {
    const table = new RequestTable();
    for (const id of [3, 1, "b", 2]) table.add(inFlight(id, "ping"));
    table.take(1);
    table.add(inFlight(1, "ping"));
    expect([...table.values()].map((entry) => entry.id)).toEqual([3, "b", 2, 1]);
    table.clear();
    expect(table.size).toBe(0);
    expect([...table.values()]).toEqual([]);
  });

  it("carries an owner's own fields on the same entries", () => {
    const table = new RequestTable<ReturnType<typeof inFlight> & { deadline: number }>();
    table.add({ ...inFlight(1, "tools/call"), deadline: 42 });
    expect(table.get(1)?.deadline).toBe(42);
  });
});
