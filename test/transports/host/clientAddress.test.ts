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

  it("any other IPv6 address is itself: machines of one subnet do not share an allowance", () => {
    expect(clientKey("2001:db8:1:2::1")).toBe("2001:db8:1:2::1");
    expect(clientKey("2001:db8:1:2::2")).toBe("2001:db8:1:2::2");
    expect(clientKey("2001:DB8::1")).toBe("2001:db8::1");
    expect(clientKey("fe80::1%eth0")).not.toBe(clientKey("fe80::1%eth1"));
  });

  it("what is not an address is itself", () => {
    expect(clientKey("unknown")).toBe("unknown");
  });
});
