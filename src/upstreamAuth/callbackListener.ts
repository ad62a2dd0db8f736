/**
 * The loopback listener a browser login comes back to (RFC 8252 §7.3): `http://127.0.0.1:PORT/callback`,
 * open only while the login runs. A request to /callback without this login's `state` (a stale
 * tab, another login's redirect, a forged one, anything else local) is refused and the listener
 * keeps waiting: such a request must not end the login the real redirect is still coming to. The
 * first request with the right state decides: its code, or its `error`, which ends the login.
 * Nothing from the query is written back to the page.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describeDuration } from "../errors/describeDuration.js";
import { NormalizerError } from "../errors/NormalizerError.js";
import { visible } from "../errors/visible.js";

export const CALLBACK_PATH = "/callback";

export interface CallbackListener {
  readonly port: number;
  readonly redirectUrl: string;
  /** Resolves with the authorization code, or rejects (an error answer, no answer in `timeoutMs`). */
  waitForCode(timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

/**
 * Refused requests logged per login: a local flood of them is still answered (each on its own,
 * nothing kept but a count) but not logged past this many.
 */
export const MAX_REFUSALS_LOGGED = 5;

const PAGE = (title: string, text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body ` +
  `style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;

/**
 * Listens on 127.0.0.1:`port` (0: any free port). `expectedState` is read when the browser
 * comes back (the state is made after the listener, when the authorization URL is built).
 * `warn` is told of each refused request, up to `MAX_REFUSALS_LOGGED`.
 */
export async function listenForCallback(
  port: number,
  expectedState: () => string | undefined,
  what: string,
  warn: (message: string) => void = () => {},
): Promise<CallbackListener> {
  let refused = 0;
  let settle: { resolve(code: string): void; reject(error: Error): void } | undefined;
  const outcome = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  outcome.catch(() => {}); // observed by waitForCode; a refusal before it is called is kept
  let decided = false;
  const decide = (result: { code: string } | { error: Error }): void => {
    if (decided) return;
    decided = true;
    if ("code" in result) settle!.resolve(result.code);
    else settle!.reject(result.error);
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== CALLBACK_PATH) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    const reply = (status: number, title: string, text: string): void => {
      res
        .writeHead(status, {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-store",
          connection: "close",
        })
        .end(PAGE(title, text));
    };
    if (decided)
      return reply(
        409,
        "Login already finished",
        "This login has already received its answer. You can close this tab.",
      );
    const state = url.searchParams.get("state");
    const expected = expectedState();
    if (expected === undefined || state !== expected) {
      reply(
        400,
        "Login refused",
        "This request does not belong to the login mcp-normalizer is waiting for (its state is missing or not " +
          "this login's). It was ignored; the login still waits for its own redirect.",
      );
      refused++;
      const which = state === null ? "without a state" : "whose state is not this login's";
      if (refused <= MAX_REFUSALS_LOGGED)
        warn(
          `${what}: refused a request to the callback ${which} (a stale tab, another login's redirect or a ` +
            `forged one); still waiting for the browser` +
            (refused === MAX_REFUSALS_LOGGED ? "; further refused requests are not logged" : ""),
        );
      return;
    }
    const error = url.searchParams.get("error");
    if (error !== null) {
      reply(
        400,
        "Login failed",
        "The authorization server did not grant access. Nothing was stored; see the terminal.",
      );
      const description = url.searchParams.get("error_description");
      return decide({
        error: new NormalizerError(
          "LOGIN_FAILED",
          `${what}: the authorization server answered ` +
            `${JSON.stringify(error.slice(0, 100))}${description ? `: ${visible(description.slice(0, 200))}` : ""}`,
        ),
      });
    }
    const code = url.searchParams.get("code");
    if (code === null || code === "") {
      reply(400, "Login failed", "The redirect carried no authorization code. Nothing was stored.");
      return decide({
        error: new NormalizerError("LOGIN_FAILED", `${what}: the browser came back without an authorization code`),
      });
    }
    reply(200, "Authorization received", "mcp-normalizer has what it needs. You can close this tab.");
    decide({ code });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  let timer: NodeJS.Timeout | undefined;
  const refusedNote = (): string =>
    refused === 0 ? "" : ` (${refused} request${refused === 1 ? "" : "s"} without its state refused)`;

  return {
    port: actual,
    redirectUrl: `http://127.0.0.1:${actual}${CALLBACK_PATH}`,
    waitForCode(timeoutMs) {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new NormalizerError(
                "LOGIN_FAILED",
                `${what}: no answer from the browser within ${describeDuration(timeoutMs)} (limits.loginTimeoutMs)` +
                  `${refusedNote()}; nothing stored, run the login again`,
              ),
            ),
          timeoutMs,
        );
      });
      return Promise.race([outcome, timeout]).finally(() => clearTimeout(timer));
    },
    close() {
      clearTimeout(timer);
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
