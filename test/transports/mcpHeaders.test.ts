/** The one rule for the host headers an upstream gets. */
import { describe, expect, it } from "vitest";
import { forwardableMcpHeaders, isForwardedMcpHeader } from "../../src/transports/mcpHeaders.js";

describe("forwardableMcpHeaders", () => {
  it("keeps mcp-* headers (names lowercased, lists joined) and nothing else, never the session id", () => {
    expect(
      forwardableMcpHeaders({
        "MCP-Protocol-Version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": ["a", "b"],
        "mcp-session-id": "host-session",
        authorization: "Bearer for-the-proxy",
        cookie: "c=1",
        "x-mcp-other": "no",
        "mcp-unset": undefined,
      }),
    ).toEqual({ "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "a, b" });
  });

  it("is undefined when nothing is forwarded", () => {
    expect(forwardableMcpHeaders({ authorization: "Bearer x", "mcp-session-id": "s" })).toBeUndefined();
    expect(isForwardedMcpHeader("mcp-session-id")).toBe(false);
    expect(isForwardedMcpHeader("mcp-anything-new")).toBe(true);
  });
});
