/**
 * rxagent/typebox: loads TypeBox 0.34's compiler, the validator of tools whose `parameters` are
 * TypeBox schemas, now instead of at the first such tool.
 *
 * Without it the core loads the compiler on its own the first time it meets a TypeBox schema, so
 * `import("rxagent")` stays small and Standard Schema or JSON Schema users never load it; until
 * it has loaded, a call's validation waits for it (unless the schema is plain and the call
 * plainly matches it: tools/typebox-plain-check.ts). Import this once, before defining tools, when
 * every validation must answer synchronously, as marble tests on virtual time need
 * (`rxagent/testing` imports it for you).
 *
 * @example
 * import "rxagent/typebox";
 * import { defineTool } from "rxagent";
 */
import "../tools/load-typebox-compiler.js";
