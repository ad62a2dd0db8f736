/**
 * Signals of long-running commands (issue 5). Each function returns the one that removes its
 * handler.
 *
 * - SIGTERM / SIGINT: graceful shutdown (stop accepting, let in-flight requests finish up to
 *   `limits.shutdownGraceMs`, end upstreams, flush the log, exit 0). A second one during the
 *   grace period ends the wait at once.
 * - SIGHUP: reload (`serve --config`: re-read the config for new sessions; every command:
 *   reopen the log file after rotation). Without a handler Node would exit on SIGHUP.
 */
export function onShutdownSignal(handler: (signal: NodeJS.Signals) => void): () => void {
  const listener = (signal: NodeJS.Signals): void => handler(signal);
  process.on("SIGTERM", listener);
  process.on("SIGINT", listener);
  return () => {
    process.off("SIGTERM", listener);
    process.off("SIGINT", listener);
  };
}

/** Resolves with the first SIGTERM/SIGINT. */
export function nextShutdownSignal(): { signal: Promise<NodeJS.Signals>; cancel: () => void } {
  let stop = (): void => {};
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    stop = onShutdownSignal((received) => {
      stop();
      resolve(received);
    });
  });
  return { signal, cancel: () => stop() };
}

export function onReloadSignal(handler: () => void): () => void {
  const listener = (): void => handler();
  process.on("SIGHUP", listener);
  return () => process.off("SIGHUP", listener);
}
