/** A raw streamable HTTP host for the bad-input and fuzz tests: what it POSTs is exactly what the test wrote. */
export interface Posted {
  readonly status: number;
  readonly headers: Headers;
  /** JSON-RPC messages of the answer (a JSON body or the SSE stream's `data:` events). */
  readonly messages: Array<Record<string, unknown>>;
}

export async function post(
  url: string,
  body: string | Uint8Array,
  session?: string,
  headers: Record<string, string> = {},
): Promise<Posted> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(session === undefined ? {} : { "mcp-session-id": session }),
      ...headers,
    },
    body,
  });
  const text = await response.text();
  const messages: Array<Record<string, unknown>> = [];
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream")) {
    for (const line of text.split("\n"))
      if (line.startsWith("data:")) messages.push(JSON.parse(line.slice(5)) as Record<string, unknown>);
  } else if (text.trim() !== "") {
    const parsed = JSON.parse(text) as unknown;
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) messages.push(m as Record<string, unknown>);
  }
  return { status: response.status, headers: response.headers, messages };
}

/** Initializes a session on `url` (…/mcp/NAME); returns its id. */
export async function openSession(url: string): Promise<string> {
  const init = await post(
    url,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bad-host", version: "1" } },
    }),
  );
  const session = init.headers.get("mcp-session-id");
  if (init.status !== 200 || session === null)
    throw new Error(`initialize failed: ${init.status} ${JSON.stringify(init.messages)}`);
  await post(url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session);
  return session;
}

export const rpc = (id: unknown, method: string, params: Record<string, unknown> = {}): string =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });

/** An SSE stream (a POST's answer, a GET stream): its messages gathered as they come (`ended` once it ends). */
export function gathered(response: Response): { messages: Array<Record<string, unknown>>; ended: Promise<void> } {
  const messages: Array<Record<string, unknown>> = [];
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5))
          .join("\n");
        buffer = buffer.slice(end + 2);
        if (data.trim() !== "") messages.push(JSON.parse(data) as Record<string, unknown>);
      }
    }
  })();
  return { messages, ended };
}
