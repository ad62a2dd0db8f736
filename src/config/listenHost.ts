/**
 * What `listen.host` and `serve --host` take: an IP address (IPv6 with or without brackets) or a
 * host name (RFC 1123 labels). An empty string would listen on every interface, and a name with a
 * space fails only at listen time, with a message that names neither the field nor the fix.
 */
import { isIP } from "node:net";

/** One label of a host name: letters, digits and inner hyphens, at most 63. */
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const HOST_NAME = new RegExp(`^(?=.{1,253}\\.?$)${LABEL}(?:\\.${LABEL})*\\.?$`);

export const NOT_A_LISTEN_HOST = "expects an IP address (127.0.0.1, 0.0.0.0, ::1 or [::1]) or a host name";

export function isListenHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return isIP(bare) !== 0 || (bare === host && HOST_NAME.test(host));
}
