/**
 * The `MCP-Protocol-Version` header a streamable HTTP host sends with what follows its
 * `initialize`. The spec answers an invalid or unsupported one with 400. A date later than every
 * revision the proxy's SDK knows may be a newer revision (the stateless 2026-07-28 is one): the
 * upstream decides on it, so it goes on. A value that is no date, or an earlier date that was
 * never a revision, no server serves — refused here, since a stdio upstream never sees the
 * header to refuse it itself.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const LATEST_KNOWN = [...SUPPORTED_PROTOCOL_VERSIONS].sort().at(-1) ?? "";

/** Why the header cannot be served (the text of a 400), or undefined when it can (or is absent). */
export function unsupportedProtocolVersion(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!DATE.test(header)) return "Bad Request: the MCP-Protocol-Version header is not a protocol version (YYYY-MM-DD)";
  if (header > LATEST_KNOWN || SUPPORTED_PROTOCOL_VERSIONS.includes(header)) return undefined;
  return (
    `Bad Request: unsupported protocol version ${header} in MCP-Protocol-Version ` +
    `(supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}, and later ones the server knows)`
  );
}
