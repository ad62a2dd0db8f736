/** The whole body of a response a transport's fetch gave, as UTF-8 text (read through its reader). */
import type { ResponseLike } from "../../../src/transports/upstream/nodeFetch.js";

export async function readAll(response: ResponseLike): Promise<string> {
  const reader = response.body!.getReader();
  const parts: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
  }
  return Buffer.concat(parts).toString("utf8");
}
