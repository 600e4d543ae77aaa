import type { TSchema } from "@sinclair/typebox";
import { lazyCompiler } from "./lazy-compiler.js";
import { plainTypeBoxValidator } from "./typebox-plain-check.js";

/**
 * TypeBox 0.34's compiler, the validator of TypeBox schemas, loaded at the first such schema or
 * when `rxagent/typebox` (or `rxagent/testing`) is imported. A plain schema (typebox-plain-check.ts)
 * loads it only at the first call that does not plainly match it.
 *
 * Why not up front: the compiler and TypeBox's value functions are about 220 modules in Node,
 * half of what `import("rxagent")` loaded, and a Standard Schema or JSON Schema user never runs
 * them.
 */
export const typeBoxCompiler = lazyCompiler(
  { schema: "a TypeBox schema", compiler: "TypeBox's compiler" },
  () => import("./typebox-validator.js").then((module) => (schema: object) => module.typeBoxValidator(schema as TSchema)),
  plainTypeBoxValidator,
);
