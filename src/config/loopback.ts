/**
 * Whether a host is this machine's loopback: judged by what it is, not how it is written —
 * `::ffff:127.0.0.1`, `0:0:0:0:0:0:0:1`, `[::1]`, `LOCALHOST` and `localhost.` are loopback; `::`
 * and `0.0.0.0` are not. `serve` asks it of the address it listens on (loopback needs no bearer
 * token), the OAuth layer of the servers it sends tokens to (plain http only to loopback).
 */
import { BlockList, isIP } from "node:net";

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
 * A plain http URL to a host that is not loopback: what the OAuth layer sends no secret to
 * (tokens, the PKCE verifier, a client secret would cross the network in clear) unless the
 * server's `auth.allowHttp` says the network is trusted. Not a URL at all: false.
 */
export function isPlainHttpBeyondLoopback(url: string | URL): boolean {
  const parsed = typeof url !== "string" ? url : URL.canParse(url) ? new URL(url) : null;
  return parsed !== null && parsed.protocol === "http:" && !isLoopbackHost(parsed.hostname);
}

const ALLOW_HTTP = '"allowHttp": true';
const PLAIN_HTTP_WHY =
  "is plain http to a host that is not loopback: OAuth would send its tokens and secrets in clear; use https, or ";

/** Why OAuth to such a URL is refused, after the config field at fault. */
export const PLAIN_HTTP_OAUTH = `${PLAIN_HTTP_WHY}set ${ALLOW_HTTP} in the server's auth for a network you trust`;

/** The same after a command-line flag, which has no way to say `allowHttp`. */
const WITH_A_CONFIG = `a config file whose server's auth has ${ALLOW_HTTP},`;
export const PLAIN_HTTP_OAUTH_FLAG = `${PLAIN_HTTP_WHY}${WITH_A_CONFIG} for a network you trust`;
