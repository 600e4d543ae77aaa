import { from, map, type Observable } from "rxjs";
import { isPromiseLike } from "../util/is-promise-like.js";
import { invalidArgumentsText, pointerOf } from "./argument-errors.js";
import { copyArguments } from "./copy-arguments.js";
import type { ArgumentValidation, SchemaValidator } from "./schema-validator.js";
import type { StandardSchemaV1 } from "./standard-schema.js";

/**
 * Validates through a Standard Schema's own `~standard.validate` (zod 4, valibot, arktype, …).
 *
 * The library applies its own rules (coercion only where the schema asks, e.g. `z.coerce`; its
 * own defaults). A validator that answers with a Promise gives an Observable of the outcome.
 */
export function standardValidator(schema: StandardSchemaV1): SchemaValidator {
  const standard = schema["~standard"];
  return (toolName, argumentsValue) => {
    // The library may hand back parts of its input: the tool gets its own copy.
    const result = standard.validate(copyArguments(argumentsValue));
    if (!isPromiseLike<StandardSchemaV1.Result<unknown>>(result)) return validationOf(toolName, result, argumentsValue);
    return from(result).pipe(map((settled) => validationOf(toolName, settled, argumentsValue))) as Observable<ArgumentValidation>;
  };
}

/**
 * The JSON Schema the model sees for a Standard Schema, from the library's own converter
 * through the Standard JSON Schema interface (`~standard.jsonSchema.input`): zod 4 offers it on
 * every schema, valibot through `toStandardJsonSchema` of `@valibot/to-json-schema`, arktype on
 * its types. Draft 2020-12, with the top-level `$schema` left out (some providers refuse it).
 *
 * Throws, naming the library, when the schema offers no converter or the converter fails.
 */
export function jsonSchemaOfStandard(schema: StandardSchemaV1): object {
  const standard = schema["~standard"];
  if (typeof standard.jsonSchema?.input !== "function") {
    throw new Error(`the ${standard.vendor} schema offers no JSON Schema for the model (no ~standard.jsonSchema); ${converterHint(standard.vendor)}`);
  }
  const { $schema: _declared, ...jsonSchema } = standard.jsonSchema.input({ target: "draft-2020-12" });
  return jsonSchema;
}

/**
 * What to do about a schema without a converter, for the vendor at hand: zod 3 schemas carry
 * `~standard` but no JSON Schema, and zod 4 (also shipped inside zod 3.25 as `zod/v4`) has one.
 */
function converterHint(vendor: string): string {
  if (vendor === "zod") return 'use zod 4: import { z } from "zod/v4" (zod 3.25 and later ship it) or upgrade to zod 4';
  if (vendor === "valibot") return "wrap it in a Standard JSON Schema (valibot: toStandardJsonSchema from @valibot/to-json-schema)";
  return "wrap it in a Standard JSON Schema (its ~standard.jsonSchema.input gives the schema the model sees), or pass a JSON Schema";
}

function validationOf(toolName: string, result: StandardSchemaV1.Result<unknown>, received: object): ArgumentValidation {
  if (!result.issues) return { valid: true, value: result.value };
  const issues = result.issues.map((issue) => ({
    path: pointerOf((issue.path ?? []).map((segment) => (typeof segment === "object" ? segment.key : segment))),
    message: issue.message,
  }));
  return { valid: false, message: invalidArgumentsText(toolName, issues, received, received) };
}
