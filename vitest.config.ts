import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    globalSetup: ["test/globalSetup.ts"],
    setupFiles: ["test/helpers/removeTempDirs.ts"],
    // After-hooks in reverse order: a file's own afterAll (stopping processes) runs before the temp folders go.
    sequence: { hooks: "stack" },
  },
});
