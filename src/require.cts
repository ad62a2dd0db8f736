/**
 * `require("mcp-normalizer")` from CommonJS. The package is an ES module: where Node can require
 * one (22.12 and later) it is loaded; on Node 20 the error says how to load it, where Node's own
 * would say the package defines no main export.
 */
const features = process.features as { require_module?: boolean };
if (features.require_module !== true)
  throw new Error(
    'mcp-normalizer is an ES module: load it with `import { withNormalization } from "mcp-normalizer"`, or ' +
      'from CommonJS with `const { withNormalization } = await import("mcp-normalizer")`',
  );
module.exports = require("./index.js");
