/**
 * A streamable HTTP session counts as idle (a new session of its client may take its slot) only
 * once its first POST has been taken: before that its initialize is still on its way in (its
 * upstream may take seconds to connect).
 */
import { describe, expect, it } from "vitest";
import { StreamableHttpHostSession } from "../../../src/transports/host/streamableHttpHost.js";

describe("StreamableHttpHostSession.idleSince", () => {
  it("is undefined before the session's first POST is taken, and for a stateless one", async () => {
    const options = { sseKeepAliveMs: 0, maxQueuedMessages: 10, idleTimeoutMs: 0 };
    const opening = new StreamableHttpHostSession({ ...options, sessionId: "s-1", stateless: false });
    expect(opening.idleSince()).toBeUndefined();
    const stateless = new StreamableHttpHostSession({ ...options, stateless: true });
    expect(stateless.idleSince()).toBeUndefined();
    await opening.close();
    await stateless.close();
  });
});
