/** Tests spawn dist/cli.js: build it once, fresh, before any test runs. */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./helpers/paths.js";

export default function setup(): void {
  execFileSync(
    process.execPath,
    [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "tsconfig.build.json")],
    { stdio: "inherit", cwd: ROOT },
  );
}
