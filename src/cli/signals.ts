/**
 * Signals of long-running commands. Each function returns the one that removes its
 * handler.
 *
 * - SIGTERM / SIGINT: shutdown (`serve`: stop accepting, let in-flight requests finish up to
 *   `limits.shutdownGraceMs` — a second signal ends the wait at once —, end upstreams, flush the
 *   log, exit 0; `stdio`: the same at once, its host being the one that stops it).
 * - SIGHUP: reload (`serve --config`: re-read the config for new sessions; every command:
 *   reopen the log file after rotation). Without a handler Node would exit on SIGHUP — so it is
 *   held from the moment the shutdown signals are taken, before the reload handler exists: a
 *   SIGHUP while `stdio` starts would otherwise kill it and orphan the upstream it had spawned.
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

/** How a command stopped by a signal exits: 130 for SIGINT (Ctrl-C), 143 for SIGTERM. */
export function signalExitCode(signal: NodeJS.Signals): 130 | 143 {
  return signal === "SIGINT" ? 130 : 143;
}

export interface ShutdownSignals {
  /** The first SIGTERM/SIGINT: shut down gracefully. */
  readonly first: Promise<NodeJS.Signals>;
  /** The second: stop waiting for requests in flight. */
  readonly second: Promise<NodeJS.Signals>;
  dispose(): void;
}

/**
 * One listener for the whole shutdown. Removing a signal listener and adding another would
 * leave a moment with none, where Node restores the default action (a second SIGTERM kills
 * the process without flushing the log), so the same listener counts both signals.
 */
export function shutdownSignals(): ShutdownSignals {
  let onFirst: (signal: NodeJS.Signals) => void = () => {};
  let onSecond: (signal: NodeJS.Signals) => void = () => {};
  const first = new Promise<NodeJS.Signals>((resolve) => (onFirst = resolve));
  const second = new Promise<NodeJS.Signals>((resolve) => (onSecond = resolve));
  let received = 0;
  const disposeShutdown = onShutdownSignal((signal) => {
    received++;
    if (received === 1) onFirst(signal);
    else onSecond(signal);
  });
  const releaseReload = holdReloadSignal();
  const dispose = (): void => {
    disposeShutdown();
    releaseReload();
  };
  return { first, second, dispose };
}

export function onReloadSignal(handler: () => void): () => void {
  const listener = (): void => handler();
  process.on("SIGHUP", listener);
  return () => process.off("SIGHUP", listener);
}

/**
 * Takes SIGHUP (doing nothing with it) until the returned function is called: until a command's
 * own reload handler is there — and beside it after — Node's default action, ending the process,
 * is never taken.
 */
export function holdReloadSignal(): () => void {
  const hold = (): void => {};
  process.on("SIGHUP", hold);
  return () => process.off("SIGHUP", hold);
}
