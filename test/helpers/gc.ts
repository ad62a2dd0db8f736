/**
 * A full garbage collection, for tests that check what stays in memory (with `WeakRef`s): V8's
 * `gc()` made available at run time, since vitest's workers start without `--expose-gc`.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Lets pending callbacks run, then collects everything unreachable. */
export async function collectGarbage(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  gc();
}
