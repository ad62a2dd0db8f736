/** Which client a connection counts against for `limits.maxSessionsPerClient`. */
import { describe, expect, it } from "vitest";
import { clientKey, LOOPBACK_CLIENT } from "../../../src/transports/host/clientAddress.js";

describe("clientKey", () => {
  it("every loopback address, v4, v6 and v4-mapped, is one client", () => {
    for (const address of ["127.0.0.1", "127.0.0.2", "127.255.1.9", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.3"])
      expect(clientKey(address), address).toBe(LOOPBACK_CLIENT);
  });

  it("an IPv4 address is itself, also when it comes v4-mapped", () => {
    expect(clientKey("10.1.2.3")).toBe("10.1.2.3");
    expect(clientKey("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(clientKey("::ffff:a01:203")).toBe("10.1.2.3");
    expect(clientKey("128.0.0.1")).toBe("128.0.0.1");
  });

  it("an IPv6 address counts by its /64, whatever its spelling or zone", () => {
    const key = "2001:db8:1:2::/64";
    for (const address of [
      "2001:db8:1:2::1",
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:0db8:0001:0002:0:0:0:9",
      "2001:DB8:1:2::1.2.3.4",
    ])
      expect(clientKey(address), address).toBe(key);
    expect(clientKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(clientKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientKey("::2")).toBe("0:0:0:0::/64");
  });

  it("what is not an address is itself", () => {
    expect(clientKey("unknown")).toBe("unknown");
  });
});
