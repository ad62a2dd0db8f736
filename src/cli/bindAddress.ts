/**
 * What `serve` makes of the address it listens on: whether it is loopback (then no bearer token
 * is required), and which `Host` names its listener accepts when the config lists none.
 *
 * An address is judged by what it is, not how it is written: `::ffff:127.0.0.1`,
 * `0:0:0:0:0:0:0:1`, `LOCALHOST` and `localhost.` are loopback; `::` and `0.0.0.0` are not.
 */
import { BlockList, isIP } from "node:net";
import { LOOPBACK_HOSTS } from "../config/defaults.js";

const LOOPBACK_ADDRESSES = new BlockList();
LOOPBACK_ADDRESSES.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK_ADDRESSES.addAddress("::1", "ipv6");

/** The address as a bind call takes it: IPv6 without brackets; names lowercased, without a final dot. */
export function bindAddressOf(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return isIP(bare) === 0 ? bare.toLowerCase().replace(/\.$/, "") : bare;
}

export function isLoopbackHost(host: string): boolean {
  const address = bindAddressOf(host);
  if (address === "localhost") return true;
  const family = isIP(address);
  return family !== 0 && LOOPBACK_ADDRESSES.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * `allowedHosts` when the config sets none: the loopback names and the address it listens on, as
 * written and as a URL writes it (what its printed URLs and clients send). Listening beyond
 * loopback with bearer tokens: any. There clients (a pod's probes and Services, a container's
 * port mapping) name it by addresses no list foresees, and the check is not what protects it: it
 * defends a listener against DNS rebinding from a browser page, which cannot send a token it
 * does not know.
 */
export function defaultAllowedHosts(bindHost: string, hasTokens: boolean): readonly string[] {
  if (hasTokens && !isLoopbackHost(bindHost)) return ["*"];
  const address = bindAddressOf(bindHost);
  if (address === "") return LOOPBACK_HOSTS;
  const written = isIP(address) === 6 ? `[${address.toLowerCase()}]` : address;
  const names = new Set([...LOOPBACK_HOSTS, written]);
  try {
    names.add(new URL(`http://${written}/`).hostname);
  } catch {
    // Not a host a URL can hold (a zone id): a client cannot send it as `Host` either.
  }
  return [...names];
}
