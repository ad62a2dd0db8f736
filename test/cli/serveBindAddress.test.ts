/**
 * `serve` answers on the URLs it prints, whatever address it listens on: the `Host` check's
 * default takes the bind address in (and beyond loopback with bearer tokens, any name: pods are
 * reached by addresses no list foresees), and `--host '[::1]'` is the IPv6 loopback as URLs write it.
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig, FAULT_SERVER } from "../reliability/helpers.js";
import { defaultAllowedHosts } from "../../src/cli/bindAddress.js";

const running: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((serve) => serve.stop()));
});

/** GET `path` at `url`'s address, with `Host` set to `host` (default: the URL's). */
function get(url: string, path: string, host?: string, token?: string): Promise<number> {
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname.replace(/^\[(.*)\]$/, "$1"),
        port: target.port,
        path: target.pathname,
        headers: {
          host: host ?? target.host,
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        timeout: 5_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

describe("serve's Host check, by default", () => {
  it("--host 127.0.0.2: its printed URLs answer; another name still gets 403", async () => {
    const serve = await startServe(["--host", "127.0.0.2", "--", process.execPath, FAULT_SERVER]);
    running.push(serve);
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+/);
    expect(await get(serve.url, "/healthz")).toBe(200);
    expect(await get(serve.url, "/healthz", "127.0.0.1")).toBe(200);
    expect(await get(serve.url, "/healthz", "evil.example")).toBe(403);
  });

  it("--host '[::1]' listens on the IPv6 loopback and answers there", async () => {
    const serve = await startServe(["--host", "[::1]", "--", process.execPath, FAULT_SERVER]);
    running.push(serve);
    expect(serve.url).toMatch(/^http:\/\/\[::1\]:\d+/);
    expect(await get(serve.url, "/healthz")).toBe(200);
  });

  it("beyond loopback with bearer tokens (a pod, a container) any Host is served: the token is the check", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      listen: { host: "0.0.0.0" },
      auth: { bearerTokens: ["t0k-en-for-the-test"] },
    });
    running.push(serve);
    expect(serve.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+/);
    expect(await get(serve.url, "/healthz", "10.1.2.3:8808")).toBe(200);
    expect(await get(serve.url, "/metrics", "pod.svc.cluster.local")).toBe(401);
    expect(await get(serve.url, "/metrics", "pod.svc.cluster.local", "t0k-en-for-the-test")).toBe(200);
  });

  it("allowedHosts in the config is kept as it is", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      listen: { host: "127.0.0.2" },
      allowedHosts: ["proxy.internal"],
      auth: { bearerTokens: ["t0k-en-for-the-test"] },
    });
    running.push(serve);
    expect(await get(serve.url, "/healthz", "proxy.internal")).toBe(200);
    expect(await get(serve.url, "/healthz", "127.0.0.2")).toBe(403);
  });

  it("a tokened listener on loopback written another way keeps the check", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      listen: { host: "::ffff:127.0.0.1" },
      auth: { bearerTokens: ["t0k-en-for-the-test"] },
    });
    running.push(serve);
    expect(await get(serve.url, "/healthz", "evil.example")).toBe(403);
    expect(await get(serve.url, "/healthz", "localhost")).toBe(200);
  });

  it("a wildcard listener without tokens (allowUnauthenticated) answers its printed URL", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      listen: { host: "0.0.0.0" },
      auth: { allowUnauthenticated: true },
    });
    running.push(serve);
    expect(await get(serve.url, "/healthz")).toBe(200);
    expect(await get(serve.url, "/healthz", "evil.example")).toBe(403);
  });
});

describe("the default list, by the address as written", () => {
  it("loopback in any spelling keeps the check; a URL's form of the address is in it", () => {
    for (const bind of ["::ffff:127.0.0.1", "0:0:0:0:0:0:0:1", "LOCALHOST", "localhost.", "[::1]"])
      expect(defaultAllowedHosts(bind, true), bind).not.toContain("*");
    expect(defaultAllowedHosts("::ffff:127.0.0.1", false)).toEqual(
      expect.arrayContaining(["[::ffff:127.0.0.1]", "[::ffff:7f00:1]"]),
    );
    expect(defaultAllowedHosts("::", false)).toContain("[::]");
    expect(defaultAllowedHosts("0.0.0.0", false)).toContain("0.0.0.0");
    expect(defaultAllowedHosts("0.0.0.0", true)).toEqual(["*"]);
  });
});
