// `npm start` on a fresh clone: build dist/ when it is missing or older than src/.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function newest(dir) {
  let latest = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    latest = Math.max(latest, name.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const built = existsSync("dist/cli.js") ? statSync("dist/cli.js").mtimeMs : 0;
if (built === 0 || newest("src") > built) {
  process.stderr.write("mcp-normalizer: building dist/ …\n");
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
}
