// Regenerates config/proxy.config.schema.json from the one zod schema (src/config/schema.ts).
// test/config/config.test.ts fails when the checked-in file is stale.
import { writeFileSync } from "node:fs";
import { configJsonSchema } from "../dist/config/schema.js";

writeFileSync(
  new URL("../config/proxy.config.schema.json", import.meta.url),
  `${JSON.stringify(configJsonSchema(), null, 2)}\n`,
);
process.stderr.write("wrote config/proxy.config.schema.json\n");
