/** SIGTERM/SIGINT handling for long-running commands; returns the function that removes it. */
export function onShutdownSignal(handler: (signal: NodeJS.Signals) => void): () => void {
  const listener = (signal: NodeJS.Signals): void => handler(signal);
  process.on("SIGTERM", listener);
  process.on("SIGINT", listener);
  return () => {
    process.off("SIGTERM", listener);
    process.off("SIGINT", listener);
  };
}
