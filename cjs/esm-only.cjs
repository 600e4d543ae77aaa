// What `require("rxagent")` (or any rxagent/* entry) meets: the package is ES modules only
// ("type": "module"), so CommonJS gets this sentence instead of Node's `No "exports" main defined`.
"use strict";
throw new Error(
  'rxagent is ESM only ("type": "module"): require() cannot load it. ' +
    'Use `import { Agent } from "rxagent"` in an ES module (a .mjs file, or "type": "module" in your package.json), ' +
    'or from CommonJS: `const { Agent } = await import("rxagent")`.',
);
