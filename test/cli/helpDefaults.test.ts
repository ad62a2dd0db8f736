/** Help texts name the defaults of config/defaults.ts, and the loopback names come from its one list. */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_AUDIT_LOG_LEVEL,
  DEFAULT_CONFIG_FILE,
  DEFAULT_HOST,
  DEFAULT_PORT,
  LOOPBACK_HOSTS,
} from "../../src/config/defaults.js";
import { AUDIT_HELP } from "../../src/cli/commands/audit.js";
import { LOGIN_HELP } from "../../src/cli/commands/login.js";
import { SERVE_HELP } from "../../src/cli/commands/serve.js";
import { NORMALIZE_HELP } from "../../src/cli/commands/normalize.js";
import { REPORT_HELP } from "../../src/cli/commands/report.js";
import { MAIN_HELP } from "../../src/cli/main.js";
import { isLoopbackHost } from "../../src/config/loopback.js";
import { UpstreamAuthSchema } from "../../src/config/schema.js";
import { runCli } from "../helpers/runCli.js";

describe("help texts and defaults", () => {
  it("serve, login and audit help name the defaults module's values", () => {
    expect(SERVE_HELP).toContain(`listen.host, else ${DEFAULT_HOST})`);
    expect(SERVE_HELP).toContain(`listen.port, else ${DEFAULT_PORT};`);
    expect(SERVE_HELP).toContain(`(default ./${DEFAULT_CONFIG_FILE} when no upstream is named)`);
    expect(LOGIN_HELP).toContain(`(default ./${DEFAULT_CONFIG_FILE})`);
    expect(AUDIT_HELP).toContain(`on stderr (default ${DEFAULT_AUDIT_LOG_LEVEL})`);
  });

  it("every help's exit codes name what docs/operations.md lists for that command", () => {
    // Stopped by SIGINT/SIGTERM: the commands that exit 130/143.
    for (const help of [MAIN_HELP, AUDIT_HELP, REPORT_HELP, NORMALIZE_HELP]) expect(help).toMatch(/130\/143/);
    expect(SERVE_HELP).toMatch(/2 bad command line,[^;]*non-loopback bind without auth/);
  });

  it("help COMMAND prints that command's help, as COMMAND --help does", async () => {
    const run = await runCli(["help", "serve"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${SERVE_HELP}\n`);
    // As `serv --help` is: a typo named, not answered with the general help and success.
    const unknown = await runCli(["help", "serv"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/^mcp-normalizer: unknown command "serv" \(did you mean serve\?\); commands: /);
  });

  it("help --help, help -h and help help print the general help, as help does", async () => {
    const general = await runCli(["help"]);
    expect(general.code).toBe(0);
    for (const flag of ["--help", "-h", "help"]) {
      const run = await runCli(["help", flag]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout, flag).toBe(general.stdout);
    }
  });

  it("login help names every key of a browser login's auth object, as the schema has them", () => {
    const browserLogin = UpstreamAuthSchema.options.find(
      (option) => option.type === "object" && "callbackPort" in option.shape,
    );
    const keys = Object.keys((browserLogin as { shape: object }).shape).filter((key) => key !== "grant");
    expect(keys.length).toBeGreaterThanOrEqual(5);
    for (const key of keys) expect(LOGIN_HELP, key).toContain(`"${key}"?`);
  });

  it("every loopback name is a loopback bind address (IPv6 without brackets), and nothing else is", () => {
    for (const name of LOOPBACK_HOSTS) expect(isLoopbackHost(name.replace(/^\[(.*)\]$/, "$1")), name).toBe(true);
    expect(isLoopbackHost("127.0.0.2")).toBe(true);
    for (const name of ["[::1]", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1", "LOCALHOST", "localhost.", "::0001"])
      expect(isLoopbackHost(name), name).toBe(true);
    for (const name of ["0.0.0.0", "::", "example.com", "::ffff:10.0.0.1", "128.0.0.1"])
      expect(isLoopbackHost(name), name).toBe(false);
  });
});
