/**
 * The listener's paths. Server NAMEs are path segments, percent-decoded, and
 * must be one of the configured names; anything else is `unknown` (404). With exactly one
 * server, the bare paths (`/mcp`, `/sse`, `/messages`, `/ws`) are that server's too.
 */

export type Route =
  | { readonly kind: "mcp"; readonly server: string }
  | { readonly kind: "sse"; readonly server: string }
  | { readonly kind: "messages"; readonly server: string; readonly sessionId: string | null }
  | { readonly kind: "ws"; readonly server: string }
  | { readonly kind: "healthz" | "metrics" | "report" | "unknown" };

const SERVER_ROUTES = new Set(["mcp", "sse", "messages", "ws"]);
const FIXED: Record<string, Route> = {
  "/healthz": { kind: "healthz" },
  "/metrics": { kind: "metrics" },
  "/report": { kind: "report" },
};

/**
 * `target` is the request target (`/mcp/name?x=y`, or in absolute form `http://host/mcp/name?x=y`,
 * which a server must take as well); `path` comes back without the query or the scheme and authority.
 */
export function route(target: string, serverNames: ReadonlySet<string>): { path: string; route: Route } {
  const url = originForm(target);
  const query = url.indexOf("?");
  const path = query === -1 ? url : url.slice(0, query);
  const fixed = FIXED[path];
  if (fixed !== undefined) return { path, route: fixed };
  const match = /^\/([a-z]+)(?:\/([^/]+))?\/?$/.exec(path);
  const kind = match?.[1];
  const server = match?.[2] === undefined ? onlyServer(serverNames) : decodeSegment(match[2]);
  if (kind === undefined || !SERVER_ROUTES.has(kind) || server === undefined || !serverNames.has(server)) {
    return { path, route: { kind: "unknown" } };
  }
  if (kind === "messages") {
    const params = new URLSearchParams(query === -1 ? "" : url.slice(query + 1));
    return { path, route: { kind, server, sessionId: params.get("sessionId") } };
  }
  return { path, route: { kind: kind as "mcp" | "sse" | "ws", server } };
}

/** The path and query of an absolute-form target; an origin-form one as it is. */
function originForm(target: string): string {
  if (target.startsWith("/")) return target;
  const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith("/") ? rest : `/${rest}`;
}

function onlyServer(serverNames: ReadonlySet<string>): string | undefined {
  if (serverNames.size !== 1) return undefined;
  for (const name of serverNames) return name;
  return undefined;
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
