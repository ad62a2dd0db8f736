/**
 * Reading a stored login: a token file that is no regular file (a named pipe would hold the read,
 * and a thread of Node's pool, forever) or is larger than any login is refused with the reason,
 * as a file that is not a login is: the server then needs a login, nothing waits or grows.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  LOGIN_FILE_MAX_BYTES,
  readLogin,
  type StoredLogin,
  tokenDirectory,
  writeLogin,
} from "../../src/upstreamAuth/tokenStore.js";
import { tempDir } from "../helpers/tempDir.js";

const LOGIN = {
  version: 1,
  server: "https://example.test/mcp",
  issuer: "https://auth.example.test",
  client: { client_id: "c" },
  registered: false,
  tokens: { access_token: "a", token_type: "Bearer" },
  obtainedAt: 1,
};

describe("readLogin", () => {
  it("reads a login; a missing file is no login and no problem", async () => {
    const dir = tempDir("mcpn-token-");
    writeFileSync(join(dir, "ok.json"), JSON.stringify(LOGIN));
    expect(await readLogin(join(dir, "ok.json"))).toEqual({ login: LOGIN });
    expect(await readLogin(join(dir, "missing.json"))).toEqual({});
  });

  it("refuses a named pipe at once, without waiting for a writer", async () => {
    const dir = tempDir("mcpn-token-");
    const fifo = join(dir, "fifo.json");
    execFileSync("mkfifo", [fifo]);
    const read = readLogin(fifo);
    const late = new Promise((resolve) => setTimeout(() => resolve("still waiting"), 2000));
    const result = await Promise.race([read, late]);
    // A reader still blocked in the pipe is let go (opening its other end, then closing it).
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader left: ENXIO.
    }
    expect(result).toEqual({ problem: `${fifo} is not a regular file (log in again)` });
  });

  it("refuses a file larger than any login, reading no more than the limit", async () => {
    const dir = tempDir("mcpn-token-");
    const big = join(dir, "big.json");
    // A valid login padded past the limit is refused too: no login is that large.
    writeFileSync(big, JSON.stringify({ ...LOGIN, padding: "x".repeat(LOGIN_FILE_MAX_BYTES) }));
    expect(await readLogin(big)).toEqual({
      problem: `${big} is larger than ${LOGIN_FILE_MAX_BYTES} bytes, more than any login (log in again)`,
    });
  });

  it("what writeLogin stores, it reads back: answers of many short values near their 1 MiB cap fit", async () => {
    const dir = tempDir("mcpn-token-");
    const file = join(dir, "big.json");
    // A registration of ~1 MiB of empty strings and a ~1 MiB refresh token: indented, 4.4 MB.
    const login = {
      ...LOGIN,
      client: { client_id: "c", contacts: Array.from({ length: 340_000 }, () => "") },
      tokens: { access_token: "a", token_type: "Bearer", refresh_token: "r".repeat(1_000_000) },
    } as unknown as StoredLogin;
    await writeLogin(file, dir, login);
    expect(await readLogin(file)).toEqual({ login });
  });

  it("writeLogin refuses a login larger than a token file holds, leaving nothing behind", async () => {
    const dir = tempDir("mcpn-token-");
    const login = {
      ...LOGIN,
      tokens: { access_token: "a", token_type: "Bearer", refresh_token: "r".repeat(LOGIN_FILE_MAX_BYTES) },
    } as unknown as StoredLogin;
    await expect(writeLogin(join(dir, "huge.json"), dir, login)).rejects.toThrow(/more than a token file holds/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("tokenDirectory", () => {
  it("refuses a MCPN_AUTH_DIR starting with ~ (set in a host's env block, no shell expanded it)", () => {
    for (const dir of ["~/tokens", "~alice/tokens", "~"])
      expect(() => tokenDirectory({ MCPN_AUTH_DIR: dir })).toThrow(
        `MCPN_AUTH_DIR=${dir}: "~" is not expanded here (no shell read it): give the full path`,
      );
    expect(tokenDirectory({ MCPN_AUTH_DIR: "/srv/tokens" })).toBe("/srv/tokens");
  });

  it("refuses a relative MCPN_AUTH_DIR: it would name a folder wherever a host started the proxy", () => {
    for (const dir of ["tokens", "./~tokens", "../x"])
      expect(() => tokenDirectory({ MCPN_AUTH_DIR: dir })).toThrow(
        `MCPN_AUTH_DIR=${dir}: not a full path; give one (/…)`,
      );
  });
});
