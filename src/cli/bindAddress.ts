/**
 * What `serve` makes of the address it listens on: which `Host` names its listener accepts when
 * the config lists none (whether it is loopback is ../config/loopback.ts's to say).
 */
import { isIP } from "node:net";
import { LOOPBACK_HOSTS } from "../config/defaults.js";
import { bindAddressOf, isLoopbackHost } from "../config/loopback.js";

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
