/**
 * Temp folders for tests: `tempDir()` makes one under the OS temp folder and remembers it;
 * test/helpers/removeTempDirs.ts (a vitest setup file) removes them all after each test file,
 * once the file's own afterAll hooks have stopped what was writing into them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

export function tempDir(prefix = "mcpn-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
