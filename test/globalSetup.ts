/**
 * Tests spawn dist/cli.js: build it once, fresh, before any test runs. dist/ is emptied first:
 * tsc never deletes the output of a source file that was moved or removed, and such a leftover
 * would be packed and imported as if it were still part of the package.
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/paths.js";

export default function setup(): void {
  rmSync(join(ROOT, "dist"), { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "tsconfig.build.json")],
    { stdio: "inherit", cwd: ROOT },
  );
}
