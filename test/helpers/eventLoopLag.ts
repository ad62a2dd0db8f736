/** How long this process's event loop was held during some work: the longest late tick of a 10 ms timer. */
export async function worstLagDuring<T>(work: () => Promise<T>): Promise<{ result: T; worstLagMs: number }> {
  let worstLagMs = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    worstLagMs = Math.max(worstLagMs, now - last - 10);
    last = now;
  }, 10);
  try {
    const result = await work();
    return { result, worstLagMs };
  } finally {
    clearInterval(ticker);
  }
}
