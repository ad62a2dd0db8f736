/**
 * Typed flags and pasted configs that are wrong get one or two lines naming the flag or the
 * JSON path, what was expected and what was given; exit 2 for the command line, 3 for the
 * config; never a stack trace unless `--log-level debug`.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { runCli, type CliRun } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

/** No stack frames, no zod dump: at most `max` lines, each starting with the program's name. */
function expectShort(run: CliRun, max = 2): void {
  const lines = run.stderr.trimEnd().split("\n");
  expect(lines.length, run.stderr).toBeLessThanOrEqual(max);
  expect(lines[0]).toMatch(/^mcp-normalizer: /);
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(run.stderr).not.toMatch(/ZodError|"code":|\[\s*\{/);
}

function configFile(text: string): string {
  const file = join(tempDir("mcpn-errors-"), "proxy.config.json");
  writeFileSync(file, text);
  return file;
}

describe("command-line mistakes (exit 2)", () => {
  it("a --server the config does not have is named with the closest, whatever the others' variables lack", async () => {
    const file = configFile(
      JSON.stringify({
        mcpServers: {
          github: { command: "node", env: { G: "${GH_TOKEN_UNSET_X}" } },
          slack: { command: "node", env: { S: "${SLACK_TOKEN_UNSET_X}" } },
        },
      }),
    );
    for (const command of ["stdio", "audit"]) {
      const run = await runCli([command, "--config", file, "--server", "gihtub"], { input: "" });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(
        `--server gihtub is not in ${file} (servers: github, slack) (did you mean "github"?)`,
      );
      expectShort(run, 1);
      // A name every object has is no server either.
      const inherited = await runCli([command, "--config", file, "--server", "toString"], { input: "" });
      expect(inherited.stderr).toContain("--server toString is not in");
    }
    const normalized = await runCli(["normalize", "--config", file, "--server", "constructor", "-"], {
      input: "{}",
      env: { GH_TOKEN_UNSET_X: "g", SLACK_TOKEN_UNSET_X: "s" },
    });
    expect(normalized.code, normalized.stderr).toBe(2);
    expect(normalized.stderr).toContain("--server constructor is not in");
  });

  it("login NAME needs only that server's variables, as stdio and audit do", async () => {
    const file = configFile(
      JSON.stringify({
        mcpServers: {
          remote: { url: "http://127.0.0.1:9/mcp", auth: "oauth" },
          other: { command: "node", env: { T: "${OTHER_SECRET_UNSET_X}" } },
        },
      }),
    );
    const run = await runCli(["login", "remote", "--config", file, "--no-browser"], { input: "", timeoutMs: 20_000 });
    expect(run.stderr).not.toContain("OTHER_SECRET_UNSET_X");
    expect(run.stderr).toMatch(/login to "remote": cannot reach/);
  });

  it("a file flag starting with ~ (no shell expanded it: a desktop host's args) is refused, nothing made", async () => {
    const cwd = tempDir("mcpn-tilde-");
    for (const [argv, flag] of [
      [["stdio", "--log-file", "~/n.jsonl", "--", process.execPath, "-e", "0"], "--log-file"],
      [["serve", "--log-file", "~/n.jsonl", "--name", "x", "--", process.execPath, "-e", "0"], "--log-file"],
      [["audit", "-o", "~/r.md", "--", process.execPath, "-e", "0"], "--output"],
      // A shell reads ~alice/… as alice's home folder too.
      [["stdio", "--log-file", "~root/n.jsonl", "--", process.execPath, "-e", "0"], "--log-file"],
      [["audit", "-o", "~root/r.md", "--", process.execPath, "-e", "0"], "--output"],
    ] as const) {
      const run = await runCli(argv, { cwd, input: "" });
      expect(run.code, argv.join(" ")).toBe(2);
      expect(run.stderr).toContain(`${flag} ${argv[argv.indexOf(flag === "--output" ? "-o" : flag) + 1]}`);
      expect(run.stderr).toContain('"~" is not expanded here');
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("MCPN_AUTH_DIR starting with ~ stops only what needs the token folder, naming it", async () => {
    const env = { MCPN_AUTH_DIR: "~/tokens" };
    const initialize = `${JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    })}\n`;
    const plain = await runCli(["stdio", "--", process.execPath, FIXTURE_SERVER], { env, input: initialize });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('"protocolVersion"');
    const config = join(tempDir("mcpn-authdir-"), "c.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { r: { url: "https://example.com/mcp", auth: "oauth" } } }));
    const withAuth = await runCli(["serve", "--config", config, "--port", "0"], { env });
    expect(withAuth.code).toBe(2);
    expect(withAuth.stderr).toContain('MCPN_AUTH_DIR=~/tokens: "~" is not expanded here');
  });

  it("an empty file flag or file word (an unset shell variable) is named, not read as the current folder", async () => {
    const cwd = tempDir("mcpn-empty-names-");
    for (const [argv, message] of [
      [["serve", "--config", ""], /^mcp-normalizer: serve: --config expects a file name, got "" /],
      [["stdio", "--config", "", "--server", "a"], /^mcp-normalizer: stdio: --config expects a file name, got "" /],
      [["stdio", "--log-file", "", "--", "node", "a"], /^mcp-normalizer: stdio: --log-file expects a file name/],
      [["audit", "-o", "", "--", "node", "a"], /^mcp-normalizer: audit: --output expects a file name, got "" /],
      [["normalize", ""], /^mcp-normalizer: normalize: argument 1 is empty /],
      [["report", ""], /^mcp-normalizer: report: argument 1 is empty /],
      [["login", "", "--config", "x.json"], /^mcp-normalizer: login: argument 1 is empty /],
    ] as const) {
      const run = await runCli(argv, { cwd, input: "" });
      expect(run.code, `${argv.join(" ")}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(message);
      expectShort(run, 1);
    }
    // An empty word for the upstream's own command line is its to take: not refused.
    const run = await runCli(["stdio", "--", process.execPath, "-e", "process.exit(0)", ""], { input: "" });
    expect(run.stderr).not.toMatch(/is empty|expects a file name/);
  });

  it("a bad --port or --host is named even where there is no config file to read", async () => {
    const empty = tempDir("mcpn-no-config-");
    for (const [argv, message] of [
      [["serve", "--port", "abc"], /--port expects a whole number, got "abc"/],
      [["serve", "--host", "a b"], /--host expects an IP address/],
    ] as const) {
      const run = await runCli(argv, { cwd: empty });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });

  const cases: Array<[string[], RegExp]> = [
    [
      ["serve", "--port", "99999", "--", process.execPath, FIXTURE_SERVER],
      /--port expects a port number from 0 to 65535 \(0 = any free port\), got 99999/,
    ],
    [
      ["serve", "--port", "eighty", "--", process.execPath, FIXTURE_SERVER],
      /--port expects a whole number, got "eighty"/,
    ],
    [["serve", "--prot", "8080"], /unknown option --prot \(did you mean --port\?\)/],
    [["stdio", "--log-levl", "debug", "--", "x"], /unknown option --log-levl \(did you mean --log-level\?\)/],
    [["serve", "-p", "8080"], /unknown option -p \(did you mean --port\?\)/],
    // A log named like a flag: how to name it.
    [
      ["report", "-dash.jsonl"],
      /^mcp-normalizer: report: unknown option -d \(a file named so goes after --: mcp-normalizer report -- -dash\.jsonl\)$/m,
    ],
    // A mistyped flag with a value is a flag, not a file.
    [
      ["report", "--outfile=report.md", "a.jsonl"],
      /^mcp-normalizer: report: unknown option --outfile \(see mcp-normalizer report --help\)$/m,
    ],
    [["audit", "--concurrency", "0", "--", "x"], /audit: --concurrency expects a whole number ≥ 1, got 0/],
    [
      ["serve", "--host", "192.0.2.1", "--port", "0", "--name", "x", "--", "x"],
      /refusing to listen on 192\.0\.2\.1 without auth: set auth\.bearerTokens in a config file \(serve --config FILE\)/,
    ],
    [["serv", "--port", "8080"], /unknown command "serv" \(did you mean serve\?\); commands: normalize, stdio/],
    [["--versio"], /unknown command "--versio" \(did you mean --version\?\)/],
    [["stdio", "--command"], /--command expects a value, got none/],
    [["stdio", "--command", "node", "--arg", "-y"], /--arg is followed by a word starting with '-'.*--arg=-VALUE/],
    [["stdio", "--arg", "x"], /--arg goes with --command CMD/],
    [["stdio", "--command", "node", "--", "node"], /either as --command "node" or as words/],
    [["stdio", "--url", "ftp://x"], /--url expects an http\(s\):\/\/ or ws\(s\):\/\/ URL, got "ftp:\/\/x"/],
    // fetch refuses a URL with credentials on every request: refused at once, never quoted.
    [["stdio", "--url", "https://bob:s3cret@127.0.0.1:9/mcp"], /^(?!.*s3cret).*--url has a user name or password/],
    // A --url refused for its form is quoted without what may be a key: credentials, query, fragment.
    [
      ["audit", "--url", "http:/mcp.example.com/mcp?api_key=sk-live-q1"],
      /^(?!.*sk-live).*--url expects .*got "http:\/mcp\.example\.com\/mcp" \(its credentials and query not shown\)/,
    ],
    [
      ["serve", "--url", "htps://bob:sk-live-p2/x@mcp.example.com/mcp"],
      /^(?!.*sk-live).*got "htps:\/\/mcp\.example\.com\/mcp" \(its credentials and query not shown\)/,
    ],
    [
      ["audit", "--url", "https:/alice:sk-live-s5@api.example.com/mcp"],
      /^(?!.*sk-live).*got "https:\/api\.example\.com\/mcp" \(its credentials/,
    ],
    [["audit", "--url", "alice:sk-live-n6@api.example.com/mcp"], /^(?!.*sk-live).*--url expects .*\(its credentials/],
    [
      ["login", "--url", "sk-live-t8:x-oauth-basic@api.example.com/mcp"],
      /^(?!.*sk-live).*got "api\.example\.com\/mcp"/,
    ],
    [["audit", "--url", "htps://bob:sk-live-h9#b@api.example.com/mcp"], /^(?!.*sk-live).*got "htps:\/\/api\.example/],
    // An @ in the query is no credential: the host shown is the one typed.
    [["stdio", "--url", "htps://real.example/mcp?owner=ops@other.example"], /got "htps:\/\/real\.example\/mcp" \(/],
    [["stdio", "--url", "htps://u:sk-live-s1/x@host.example/mcp"], /^(?!.*sk-live).*got "htps:\/\/host\.example\/mcp"/],
    [["stdio", "--url", "htps://bob:sk-live@Q1/x9@api.example.com/mcp"], /^(?!.*(sk-live|Q1|x9)).*got "htps:\/\/api\./],
    // An @ in the path (Smithery's /@owner/server) is no credential: shown as typed.
    [
      ["stdio", "--url", "htps://server.smithery.ai/@acme/weather/mcp"],
      /got "htps:\/\/server\.smithery\.ai\/@acme\/weather\/mcp"$/m,
    ],
    [
      ["stdio", "--url", "sk-live-t7:x-oauth-basic@api.example.com/mcp"],
      /^(?!.*sk-live).*got "api\.example\.com\/mcp"/,
    ],
    [
      ["stdio", "--url", "http://[::1/mcp?token=sk-live-u3#sk-live-f4"],
      /^(?!.*sk-live).*--url is not a valid URL .*got "http:\/\/\[::1\/mcp" \(its credentials/,
    ],
    [
      ["stdio", "--transport", "tcp", "--url", "http://127.0.0.1:9/mcp"],
      /--transport expects streamable-http, sse or websocket, got "tcp"/,
    ],
    [["stdio"], /name exactly one upstream/],
    // An unquoted header value: its second word reads as a command; named, never shown (it may be a token).
    [
      ["stdio", "--url", "http://127.0.0.1:9/mcp", "--header", "Authorization:", "Bearer", "tok-3f9a"],
      /^(?!.*tok-3f9a).*name exactly one upstream.*\(2 words beside the flags read as a command, not shown: give the command or the flag, not both; a flag's value that has spaces is quoted/,
    ],
    // serve's own forms of one upstream: a config file is not one of them.
    [
      ["serve", "--url", "http://127.0.0.1:9/mcp", "--", "node", "x.js"],
      /^mcp-normalizer: serve: name exactly one upstream: "-- CMD ARGS…" or --url URL \(see/,
    ],
    // Flags a config sets itself are refused beside --config, never dropped.
    [
      ["serve", "--config", "c.json", "--server", "a"],
      /serve: --server chooses a server for stdio and audit; serve serves every server/,
    ],
    [
      ["serve", "--config", "c.json", "--header", "X-Key: v"],
      /serve: --header goes with --url; in a config, set the server's "headers"/,
    ],
    [
      ["serve", "--config", "c.json", "--transport", "sse"],
      /serve: --transport goes with --url; in a config, set the server's "transport"/,
    ],
    [
      ["serve", "--config", "c.json", "--auth", "oauth"],
      /serve: --auth goes with --url; in a config, set the server's "auth"/,
    ],
    [
      ["stdio", "--config", "c.json", "--header", "X-Key: v"],
      /stdio: --header goes with --url; in a config, set the server's "headers"/,
    ],
    [
      ["audit", "--config", "c.json", "--transport", "sse"],
      /audit: --transport goes with --url; in a config, set the server's "transport"/,
    ],
    [
      ["serve", "proxy.config.json"],
      /"proxy\.config\.json" looks like a config file, not a server's command: pass it as --config proxy\.config\.json/,
    ],
  ];
  for (const [argv, message] of cases) {
    it(`${argv.slice(0, 4).join(" ")} → ${message.source.slice(0, 40)}…`, async () => {
      const run = await runCli(argv);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(message);
      expectShort(run);
    });
  }

  it("--log-level debug adds the stack, for whoever reports a bug", async () => {
    const run = await runCli([
      "serve",
      "--log-level",
      "debug",
      "--port",
      "99999",
      "--",
      process.execPath,
      FIXTURE_SERVER,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--port expects a port number/);
    expect(run.stderr).toMatch(/^\s+at /m);
  });
});

describe("config mistakes (exit 3)", () => {
  const cases: Array<[string, RegExp]> = [
    ['{"mcpServer": {"a": {"command": "x"}}}', /\$: unknown key "mcpServer" \(did you mean "mcpServers"\?\)/],
    ['{"servers": {"a": {"command": "x"}}}', /\$: unknown key "servers" \(VS Code's "servers" is "mcpServers" here\)/],
    [
      '{"mcpServers": {"a": {"command": "x"}}, "limits": {"maxSesions": 3}}',
      /\$\.limits: unknown key "maxSesions" \(did you mean "maxSessions"\?\)/,
    ],
    [
      '{"mcpServers": {"a": {"command": "x"}}, "listen": {"port": 99999}}',
      /\$\.listen\.port: Too big: expected number to be <=65535, got 99999/,
    ],
    [
      '{"mcpServers": {"a": {"command": "x"}}, "listen": {"port": "8080"}}',
      /\$\.listen\.port: Invalid input: expected number, received string/,
    ],
    ['{"mcpServers": {"a": {"args": ["x"]}}}', /\$\.mcpServers\.a: a server needs either "command" \(stdio\) or "url"/],
    [
      '{"mcpServers": {"a": {"comand": "node", "args": ["x"]}}}',
      /\$\.mcpServers\.a: a server needs either "command" .*; "comand" is no key here \(did you mean "command"\?\)$/m,
    ],
    [
      '{"mcpServers": {"a": {"ulr": "http://127.0.0.1:9/mcp"}}}',
      /\$\.mcpServers\.a: a server needs either "command" .*; "ulr" is no key here \(did you mean "url"\?\)$/m,
    ],
    [
      '{"mcpServers": {"a": {"command": "node", "url": "http://127.0.0.1:9/mcp"}}}',
      /\$\.mcpServers\.a: has both "command" \(stdio\) and "url": a server is one or the other/,
    ],
    [
      '{"mcpServers": {"a": {"url": "https://bob:s3cret@example.com/mcp"}}}',
      /^(?![\s\S]*s3cret)[\s\S]*\$\.mcpServers\.a\.url: has a user name or password in it/,
    ],
    [
      '{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}',
      /is not valid JSON at line 3, column 26 \(in \$\.mcpServers\.a\): expected a string in double quotes/,
    ],
    // Node cannot parse it: refused at load, not by every session later with nothing in the log.
    [
      '{"mcpServers": {"a": {"url": "http://exa mple.com/mcp"}}}',
      /\$\.mcpServers\.a\.url: not a valid URL \(a space, a bad port or an unclosed \[ in it\?\)/,
    ],
    // An empty host listened on every interface; one with a space failed at listen time, naming nothing.
    [
      '{"mcpServers": {"a": {"command": "x"}}, "listen": {"host": ""}}',
      /\$\.listen\.host: expects an IP address \(127\.0\.0\.1, 0\.0\.0\.0, ::1 or \[::1\]\) or a host name/,
    ],
    ['{"mcpServers": {"a": {"command": "x"}}, "listen": {"host": "not a host!"}}', /\$\.listen\.host: expects an IP/],
    // JSON.parse keeps the last of two equal keys: a second "auth" would drop the tokens without a word.
    [
      '{"mcpServers": {"a": {"command": "x"}}, "auth": {"bearerTokens": ["t-1"]},\n "auth": {}}',
      /\$\.auth is given twice \(again at line 2, column 2\); JSON keeps only the last one/,
    ],
    [
      '{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}',
      /\$\.mcpServers\.a is given twice \(again at line 1, column 40\)/,
    ],
    // Deep enough to exhaust the stack of a recursive walk.
    [
      `{"mcpServers": {"a": {"command": "x"}}, "x": ${"[".repeat(5000)}${"]".repeat(5000)}}`,
      /\$\.x(\[0\])+ is nested more than 64 levels deep \(line 1, column \d+\)/,
    ],
  ];
  for (const [text, message] of cases) {
    it(`${text.replace(/\s+/g, " ").slice(0, 60)} → ${message.source.slice(0, 30)}…`, async () => {
      const run = await runCli(["serve", "--port", "0", "--config", configFile(text)]);
      expect(run.code, run.stderr).toBe(3);
      expect(run.stderr).toMatch(message);
      // The file's name, then one line per problem.
      expectShort(run, 3);
    });
  }

  it("a string value that is wrong is never quoted back (it may be a secret)", async () => {
    const run = await runCli([
      "serve",
      "--port",
      "0",
      "--config",
      configFile('{"mcpServers": {"a": {"command": "x"}}, "auth": {"bearerTokens": "s3cret-token"}}'),
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/\$\.auth\.bearerTokens: Invalid input: expected array, received string/);
    expect(run.stderr).not.toContain("s3cret");
  });
});

describe("a disabled server chosen by name", () => {
  it("is named as disabled, not run with its variables unread", async () => {
    const file = configFile(
      JSON.stringify({
        mcpServers: { on: { command: "x" }, off: { command: "y", env: { K: "${MISSING_VAR}" }, disabled: true } },
      }),
    );
    const run = await runCli(["stdio", "--config", file, "--server", "off"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/stdio: --server off is disabled in .* \("disabled": true\); set it to false to use it/);
    // login too, its url never parsed.
    const remote = configFile(
      JSON.stringify({ mcpServers: { off: { url: "${OFF_URL}", auth: "oauth", disabled: true } } }),
    );
    const login = await runCli(["login", "off", "--config", remote, "--no-browser"]);
    expect(login.code).toBe(2);
    expect(login.stderr).toMatch(
      /login: "off" is disabled in .* \("disabled": true\); set it to false to log in to it/,
    );
  });
});

describe("serve --host", () => {
  it("refuses what is not an address or a host name, naming the flag", async () => {
    for (const host of ["", "not a host!", "[::1"]) {
      const run = await runCli(["serve", "--port", "0", "--host", host, "--", "cat"]);
      expect(run.code, host).toBe(2);
      expect(run.stderr).toContain("serve: --host expects an IP address");
    }
  });
});

describe("errors of commands without --log-level", () => {
  it("`--log-level debug` given to one is refused as any unknown flag, in one line", async () => {
    for (const command of ["normalize", "report"]) {
      const run = await runCli([command, "--log-level", "debug", "x.json"]);
      expect(run.code, command).toBe(2);
      expect(run.stderr.trim().split("\n"), command).toHaveLength(1);
      expect(run.stderr, command).toMatch(/log-level/);
    }
  });

  it("an internal error of theirs does not point at a flag they refuse", async () => {
    const { reportError } = await import("../../src/cli/main.js");
    const { PassThrough } = await import("node:stream");
    const told = async (takesLogLevel: boolean): Promise<string> => {
      const stderr = new PassThrough();
      let text = "";
      stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
      const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env: {}, cwd: "/" };
      expect(await reportError(new Error("boom"), io, false, takesLogLevel)).toBe(1);
      return text;
    };
    expect(await told(false)).toBe("mcp-normalizer: internal error: boom\n");
    expect(await told(true)).toBe("mcp-normalizer: internal error: boom (--log-level debug shows where)\n");
  });
});
