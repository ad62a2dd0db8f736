/**
 * A logger whose warnings become debug lines while `quiet()` says so. Used for what a stopping
 * proxy hears from its upstreams: sidecars are stopped together, so an upstream that goes away
 * (connection refused, a stream cut, a request ended early) while the proxy shuts down is
 * expected, not an operator's concern. Errors are never demoted.
 */
import type { Logger } from "./logger.js";

export function quietWhen(logger: Logger, quiet: () => boolean): Logger {
  return {
    debug: (msg, fields) => logger.debug(msg, fields),
    info: (msg, fields) => logger.info(msg, fields),
    warn: (msg, fields) =>
      quiet() ? logger.debug(msg, { ...fields, duringShutdown: true }) : logger.warn(msg, fields),
    error: (msg, fields) => logger.error(msg, fields),
    child: (fields) => quietWhen(logger.child(fields), quiet),
  };
}
