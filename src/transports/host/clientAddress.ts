/**
 * The client a request comes from, as `limits.maxSessionsPerClient` counts it: its address — but
 * every loopback address (127.0.0.0/8, `::1`) is one client, since a local process can open
 * connections from any of them; and an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is its IPv4
 * address. Other IPv6 addresses count each on its own: machines of one subnet (a LAN, a cluster's
 * pods) must not share one allowance.
 */
import { isIPv4, isIPv6 } from "node:net";
import type { IncomingMessage } from "node:http";

export const LOOPBACK_CLIENT = "loopback";

export function clientAddress(req: IncomingMessage): string {
  return clientKey(req.socket.remoteAddress ?? "unknown");
}

export function clientKey(address: string): string {
  if (isIPv4(address)) return address.startsWith("127.") ? LOOPBACK_CLIENT : address;
  const groups = isIPv6(address) ? ipv6Groups(address) : null;
  if (groups === null) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return clientKey(`${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`);
  }
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return LOOPBACK_CLIENT;
  return address.toLowerCase();
}
/** The eight 16-bit groups of a valid IPv6 address (zone id dropped, `::` and a dotted tail expanded). */
function ipv6Groups(address: string): number[] | null {
  const zone = address.indexOf("%");
  const bare = zone === -1 ? address : address.slice(0, zone);
  const halves = bare.split("::");
  const parse = (part: string): number[] =>
    part === ""
      ? []
      : part.split(":").flatMap((piece) => {
          if (!piece.includes(".")) return [Number.parseInt(piece, 16)];
          const [a, b, c, d] = piece.split(".").map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const groups = halves.length === 2 ? [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail] : head;
  return groups.length === 8 ? groups : null;
}
