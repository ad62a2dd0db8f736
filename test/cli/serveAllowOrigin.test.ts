/**
 * `serve --allow-origin ORIGIN`: a browser page (the MCP Inspector's direct mode) gets the CORS
 * grant without a config file; a value that is not an origin is refused naming the flag.
 */
import { describe, expect, it } from "vitest";
import { FAULT_SERVER } from "../reliability/helpers.js";
import { startServe } from "../helpers/proxyProcess.js";
import { runCli } from "../helpers/runCli.js";

describe("serve --allow-origin", () => {
  it("grants CORS to the pages named, and to no other", async () => {
    const serve = await startServe([
      "--name",
      "fx",
      "--allow-origin",
      "http://localhost:6274",
      "--",
      process.execPath,
      FAULT_SERVER,
    ]);
    try {
      const preflight = (origin: string) =>
        fetch(`${serve.url}/mcp/fx`, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, mcp-protocol-version",
          },
        });
      const inspector = await preflight("http://localhost:6274");
      expect(inspector.status).toBe(204);
      expect(inspector.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
      const other = await preflight("http://localhost:3000");
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await serve.stop();
    }
  });

  it("refuses a value that is not an origin, naming the flag", async () => {
    const run = await runCli([
      "serve",
      "--name",
      "fx",
      "--allow-origin",
      "not a url",
      "--",
      process.execPath,
      FAULT_SERVER,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--allow-origin expects an origin such as http:\/\/localhost:6274, got "not a url"/);
  });
});
