import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most files spend their time waiting on child processes and sockets, not on the CPU: one
    // worker per core (the default keeps one core free, so a 2-core machine ran files one by one).
    maxWorkers: Math.max(2, availableParallelism()),
    globalSetup: ["test/globalSetup.ts"],
    setupFiles: ["test/helpers/removeTempDirs.ts", "test/helpers/endLeftovers.ts"],
    // After-hooks in reverse order: a file's own afterAll (stopping processes) runs before the temp folders go.
    sequence: { hooks: "stack" },
  },
});
