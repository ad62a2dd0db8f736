/** Which answer form a host's `Accept` allows on /mcp (lazy SSE needs to know when both are). */
import { describe, expect, it } from "vitest";
import { acceptsEventStream, responseForm } from "../../../src/transports/host/requestHeaders.js";

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
    // The most specific range decides (RFC 9110 §12.5.1).
    ["application/json;q=0, */*", "sse"],
    ["*/*;q=0.5, text/event-stream;q=0", "json"],
    ["text/*;q=0, text/event-stream, application/json", "either"],
  ])("Accept %j → %s", (accept, form) => {
    expect(responseForm(accept)).toBe(form);
  });
});

describe("acceptsEventStream (a session's GET)", () => {
  it.each([
    [undefined, true],
    ["text/event-stream", true],
    ["*/*", true],
    ["application/json", false],
    ["text/event-stream;q=0, */*", false],
    ["*/*;q=0.5, text/event-stream;q=0", false],
    ["text/*;q=0, text/event-stream;q=0.1", true],
  ])("Accept %j → %s", (accept, accepted) => {
    expect(acceptsEventStream(accept)).toBe(accepted);
  });
});
