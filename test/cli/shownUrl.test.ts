/**
 * A refused `--url` as its error quotes it: no credential in any form a hand may type it, and the
 * host typed wherever the text lets it be told from a password.
 */
import { describe, expect, it } from "vitest";
import { shownUrl } from "../../src/cli/shownUrl.js";

const CUT = " (its credentials and query not shown)";

describe("shownUrl", () => {
  it.each([
    ["htps://bob:sk-live@Q1/x9@api.example.com/mcp", "htps://api.example.com/mcp"],
    ["https://bob:sk-live#b@api.example.com/mcp", "https://api.example.com/mcp"],
    ["sk-live:x-oauth-basic@api.example.com/mcp", "api.example.com/mcp"],
    ["htps://u:sk-live/b@host/mcp", "htps://host/mcp"],
    ["https:/alice:sk-live@api.example.com/mcp", "https:/api.example.com/mcp"],
    ["htps://bob:sk-live@host/mcp?e=a@b", "htps://host/mcp"],
    ["htps://admin:8472/sk-live@api.example.com/mcp", "htps://api.example.com/mcp"],
    ["htps://admin:/sk-live@api.example.com/mcp", "htps://api.example.com/mcp"],
  ])("%s: no credential shown", (url, shown) => {
    expect(shownUrl(url)).toBe(`${JSON.stringify(shown)}${CUT}`);
  });

  it.each([
    ["htps://server.smithery.ai/@acme/weather/mcp", "htps://server.smithery.ai/@acme/weather/mcp"],
    ["htps://bücher.example/@acme/mcp", "htps://bücher.example/@acme/mcp"],
    ["htps://[::1]:80/mcp", "htps://[::1]:80/mcp"],
    ["ftp://x/y", "ftp://x/y"],
  ])("%s: no credential in it, shown as typed", (url, shown) => {
    expect(shownUrl(url)).toBe(JSON.stringify(shown));
  });

  it.each([
    ["htps://real.example/mcp?owner=ops@other.example", "htps://real.example/mcp"],
    ["htps://real.example?owner=ops@other.example", "htps://real.example"],
  ])("%s: an @ in the query is the query's, the host the one typed", (url, shown) => {
    expect(shownUrl(url)).toBe(`${JSON.stringify(shown)}${CUT}`);
  });
});
