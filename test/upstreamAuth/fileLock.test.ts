/**
 * The lock processes sharing a token file take turns under: a live holder keeps it however long
 * it works, a stale one is taken over by one waiter only, a holder never removes a lock taken
 * over from it, and a lock that cannot be made is done without. Contenders are calls in one
 * process: the races are in the file system, which they share as processes would.
 */
import { existsSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withFileLock } from "../../src/upstreamAuth/fileLock.js";
import { tempDir } from "../helpers/tempDir.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work` for each contender under the lock; returns the most that were inside at once. */
async function contend(file: string, contenders: number, workMs: number, staleMs: number): Promise<number> {
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: contenders }, () =>
      withFileLock(file, { staleMs, waitMs: 10_000 }, async () => {
        most = Math.max(most, ++inside);
        await sleep(workMs);
        inside--;
      }),
    ),
  );
  return most;
}

function staleLock(file: string): void {
  writeFileSync(`${file}.lock`, "someone-who-died");
  const anHourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(`${file}.lock`, anHourAgo, anHourAgo);
}

describe("the token file lock", () => {
  it("a holder working four times longer than the stale time keeps it: the others wait their turn", async () => {
    const file = join(tempDir(), "login.json");
    expect(await contend(file, 3, 400, 100)).toBe(1);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("a stale lock is taken over by one waiter at a time (30 rounds of three)", async () => {
    const dir = tempDir();
    for (let round = 0; round < 30; round++) {
      const file = join(dir, `login-${round}.json`);
      staleLock(file);
      expect(await contend(file, 3, 20, 1_000)).toBe(1);
    }
  });

  it("a holder whose lock was taken over does not remove the new holder's", async () => {
    const file = join(tempDir(), "login.json");
    await withFileLock(file, { staleMs: 1_000, waitMs: 1_000 }, async () => {
      // Another process took the lock over (this one froze past the stale time, say).
      writeFileSync(`${file}.lock`, "the-new-holder");
    });
    expect(existsSync(`${file}.lock`)).toBe(true);
  });

  it("no folder to make it in: the work runs without it", async () => {
    const file = join(tempDir(), "missing", "login.json");
    expect(await withFileLock(file, { staleMs: 1_000, waitMs: 1_000 }, async () => "done")).toBe("done");
  });
});
