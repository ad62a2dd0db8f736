/**
 * Setup file of every test file (vitest.config.ts): removes the temp folders `tempDir()` made.
 * Registered before the file's own hooks, so it runs after them (after-hooks run in reverse).
 */
import { afterAll } from "vitest";
import { removeTempDirs } from "./tempDir.js";

afterAll(removeTempDirs);
