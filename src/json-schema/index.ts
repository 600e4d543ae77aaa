/**
 * rxagent/json-schema: loads Ajv, the validator of tools whose `parameters` are a plain JSON
 * Schema (MCP's, TypeBox 1.x's, a JSON file's), now instead of at the first such tool.
 *
 * Without it the core loads Ajv on its own the first time it meets a plain JSON Schema, so
 * TypeBox 0.34 and Standard Schema users never load it; until it has loaded, a call's validation
 * waits for it and `defineTool` cannot yet refuse a schema Ajv would not compile (its first call
 * fails with the reason). Import this once, before defining tools, when that matters: `defineTool`
 * then throws at once for such a schema, and every validation answers synchronously (as marble
 * tests on virtual time need).
 *
 * @example
 * import "rxagent/json-schema";
 * import { defineTool } from "rxagent";
 */
import { jsonSchemaCompiler } from "../tools/json-schema-loader.js";
import { jsonSchemaValidator } from "../tools/json-schema-validator.js";

jsonSchemaCompiler.use(jsonSchemaValidator);
