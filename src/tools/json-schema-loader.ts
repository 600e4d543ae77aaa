import { lazyCompiler } from "./lazy-compiler.js";

/**
 * Ajv, the validator of plain JSON Schemas, loaded at the first such schema or when
 * `rxagent/json-schema` is imported.
 *
 * Why Ajv is not imported up front: it is 86 modules in Node and 116 kB of a browser bundle, and
 * TypeBox 0.34 or Standard Schema tools never use it.
 */
export const jsonSchemaCompiler = lazyCompiler({ schema: "a JSON Schema", compiler: "Ajv" }, () =>
  import("./json-schema-validator.js").then((module) => module.jsonSchemaValidator),
);
