/**
 * Settles when `awaited` does (fulfilled or not), or after `limit` ms when there is a limit,
 * calling `late` then. What `awaited` stands for goes on either way: this only bounds a wait.
 */
export function settledWithin(awaited: Promise<unknown>, limit: number | undefined, late: () => void): Promise<void> {
  const settled = awaited.then(
    () => {},
    () => {},
  );
  if (limit === undefined) return settled;
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      late();
      resolve();
    }, limit);
    timer.unref();
    void settled.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
