/** Which answer form a host's `Accept` allows on /mcp (lazy SSE needs to know when both are). */
import { describe, expect, it } from "vitest";
import { responseForm } from "../../../src/transports/host/requestHeaders.js";

describe("responseForm (the host's Accept)", () => {
  it.each([
    [undefined, "either"],
    ["", "either"],
    ["application/json, text/event-stream", "either"],
    ["text/event-stream, application/json;q=0.5", "either"],
    ["*/*", "either"],
    ["text/event-stream", "sse"],
    ["text/*", "sse"],
    ["application/json, text/event-stream;q=0", "json"],
    ["application/json", "json"],
    ["application/*", "json"],
    ["image/png", "sse"],
  ])("Accept %j → %s", (accept, form) => {
    expect(responseForm(accept)).toBe(form);
  });
});
