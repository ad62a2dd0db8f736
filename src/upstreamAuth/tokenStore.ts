/**
 * The token directory: one JSON file per server URL, in `$MCPN_AUTH_DIR` or
 * `~/.mcp-normalizer/auth`. The directory is 0700 and each file 0600; a file is replaced
 * whole (written beside it, then renamed), so a reader never sees half a login and logging in
 * again replaces the previous one. Deleting the file logs out.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { chmod, type FileHandle, mkdir, open, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { describeUrl } from "../transports/upstream/upstreamMessages.js";
import { OAUTH_BODY_MAX_BYTES } from "./oauthFetch.js";
import { NormalizerError } from "../errors/NormalizerError.js";
import { startsWithTilde, TILDE_NOT_EXPANDED } from "../config/homeTilde.js";

export const AUTH_DIR_ENV = "MCPN_AUTH_DIR";

/** One server's login as stored on disk. */
export interface StoredLogin {
  readonly version: 1;
  /** The server URL without userinfo or query, to tell the files apart. */
  readonly server: string;
  /** The authorization server the tokens (and a registered client) belong to. */
  readonly issuer: string;
  /** The RFC 8707 resource indicator the tokens were asked for. */
  readonly resource?: string | undefined;
  /** The client: the whole registration when the proxy registered itself, else only its id. */
  readonly client: OAuthClientInformationMixed;
  /** True when `client` came from dynamic registration (the proxy may register again). */
  readonly registered: boolean;
  readonly tokens: OAuthTokens;
  /** The scope the login asked for (space separated), when it asked for one. */
  readonly scope?: string | undefined;
  /** More scope a server asked for since (a 403 `insufficient_scope`): the next login asks for it too. */
  readonly wantedScope?: string | undefined;
  readonly obtainedAt: number;
  /** When the access token expires (ms since the epoch), if the server said. */
  readonly expiresAt?: number | undefined;
}

export function tokenDirectory(env: Readonly<Record<string, string | undefined>>): string {
  const configured = env[AUTH_DIR_ENV];
  if (configured === undefined || configured === "") return join(homedir(), ".mcp-normalizer", "auth");
  // Set in a desktop host's `env` block no shell reads: the tokens would go to a folder called "~".
  if (startsWithTilde(configured))
    throw new NormalizerError(
      "USAGE",
      `${AUTH_DIR_ENV}=${configured}: ${TILDE_NOT_EXPANDED} (no shell read it): give the full path`,
    );
  // Relative, it would name a folder in whatever directory a host started the proxy in.
  if (!isAbsolute(configured))
    throw new NormalizerError("USAGE", `${AUTH_DIR_ENV}=${configured}: not a full path; give one (/…)`);
  return configured;
}

/**
 * `host_port_path-<hash>.json`: readable enough to find the file to delete, one per server —
 * scheme, host, port, path and query: the hash (two servers that differ only in their query, as
 * `?workspace=work` and `?workspace=home`, are two logins). Nothing from the userinfo or the
 * query is readable in the name.
 */
export function tokenFileName(serverUrl: string): string {
  const url = new URL(serverUrl);
  const readable = `${url.hostname}_${url.port || (url.protocol === "https:" ? "443" : "80")}${url.pathname}`
    .replace(/[^A-Za-z0-9.-]+/g, "_")
    .replace(/_+$/, "")
    .slice(0, 80);
  const hash = createHash("sha256")
    .update(`${describeUrl(url)}${url.search}`)
    .digest("hex")
    .slice(0, 12);
  return `${readable}-${hash}.json`;
}

export function tokenFilePath(dir: string, serverUrl: string): string {
  return join(dir, tokenFileName(serverUrl));
}

/**
 * Why `tokens` can never be sent, or undefined: an access token with a control character (a CR/LF
 * would split the request's headers; every HTTP client refuses it).
 */
export function unsendable(tokens: OAuthTokens): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  return /[\u0000-\u001f\u007f]/.test(tokens.access_token)
    ? "the authorization server issued an access token with control characters, which cannot be sent in a header"
    : undefined;
}

/** Tokens with the absolute expiry computed from `expires_in` as they arrive. */
export function loginWithTokens(
  base: Omit<StoredLogin, "tokens" | "obtainedAt" | "expiresAt" | "version" | "server">,
  serverUrl: string,
  tokens: OAuthTokens,
  now: number,
): StoredLogin {
  const { issuer: _stamp, ...plain } = tokens as OAuthTokens & { issuer?: unknown };
  const expiresIn = typeof plain.expires_in === "number" && plain.expires_in > 0 ? plain.expires_in : undefined;
  return {
    version: 1,
    server: describeUrl(serverUrl),
    ...base,
    tokens: plain,
    obtainedAt: now,
    ...(expiresIn === undefined ? {} : { expiresAt: now + expiresIn * 1000 }),
  };
}

/**
 * A login is a few OAuth answers (each read up to `OAUTH_BODY_MAX_BYTES`) and a few dates: a
 * token file larger than this is none, and is not read further.
 */
export const LOGIN_FILE_MAX_BYTES = 4 * OAUTH_BODY_MAX_BYTES;

/**
 * The token file's text, or why it is none: opened without blocking, so a named pipe there is
 * refused rather than waited on (holding a thread of Node's pool, which every server's file I/O
 * shares), and read only up to `LOGIN_FILE_MAX_BYTES`.
 */
async function readLoginText(file: string): Promise<{ text?: string; problem?: string }> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? {} : { problem: `cannot read ${file}: ${code ?? (error as Error).message}` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { problem: `${file} is not a regular file (log in again)` };
    const tooLarge = {
      problem: `${file} is larger than ${LOGIN_FILE_MAX_BYTES} bytes, more than any login (log in again)`,
    };
    if (stat.size > LOGIN_FILE_MAX_BYTES) return tooLarge;
    // One byte more than its size: a file growing while it is read is seen to (logins are renamed
    // into place whole, never written over).
    const buffer = Buffer.alloc(stat.size + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) return { problem: `${file} changed while it was read (log in again)` };
    }
    return { text: buffer.toString("utf8", 0, length) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: `cannot read ${file}: ${code ?? (error as Error).message}` };
  } finally {
    await handle.close().catch(() => {});
  }
}

/** The stored login, or undefined when there is none or the file is not one (then `problem` says why). */
export async function readLogin(file: string): Promise<{ login?: StoredLogin; problem?: string }> {
  const { text, problem } = await readLoginText(file);
  if (text === undefined) return problem === undefined ? {} : { problem };
  try {
    const parsed = JSON.parse(text) as Partial<StoredLogin>;
    const ok =
      parsed.version === 1 &&
      typeof parsed.issuer === "string" &&
      typeof parsed.tokens?.access_token === "string" &&
      typeof parsed.client?.client_id === "string" &&
      typeof parsed.obtainedAt === "number";
    return ok ? { login: parsed as StoredLogin } : { problem: `${file} is not an mcp-normalizer login (log in again)` };
  } catch {
    return { problem: `${file} is not JSON (log in again)` };
  }
}

/**
 * Creates the directory (0700) when missing and writes the login (0600), replacing any before it.
 * Written compact: indented, an answer of many short values grows several times over, past what
 * `readLogin` reads back. A login larger than that (answers of a broken or hostile authorization
 * server) is refused here, not stored to be refused at every read.
 */
export async function writeLogin(file: string, dir: string, login: StoredLogin): Promise<void> {
  const text = `${JSON.stringify(login)}\n`;
  const bytes = Buffer.byteLength(text);
  if (bytes > LOGIN_FILE_MAX_BYTES)
    throw new Error(
      `the login is ${bytes} bytes, more than a token file holds (${LOGIN_FILE_MAX_BYTES}): ` +
        "the authorization server's answers are too large to store",
    );
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const temporary = join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temporary, "wx", 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
