import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { invalidArgumentsText } from "./argument-errors.js";
import { copyArguments } from "./copy-arguments.js";
import type { SynchronousValidator } from "./lazy-compiler.js";
import type { ArgumentValidation } from "./schema-validator.js";

/**
 * Validates against a TypeBox 0.34 schema with TypeBox's own compiler: the fast path, as before
 * other schema kinds were accepted.
 *
 * Arguments that pass as they are come back as a copy. Otherwise a copy gets schema defaults
 * filled in and strings converted where the schema wants numbers, booleans or the like, and is
 * checked again. A conversion never changes a number's value (4.5 is not an integer).
 */
export function typeBoxValidator(schema: TSchema): SynchronousValidator {
  const check = TypeCompiler.Compile(schema);
  // Defaults must be filled even when the raw value already passes.
  const hasDefaults = containsDefault(schema);
  return (toolName, argumentsValue): ArgumentValidation => {
    if (!hasDefaults && check.Check(argumentsValue)) {
      return { valid: true, value: copyArguments(argumentsValue) };
    }
    // Arguments that only lacked defaults pass without the conversion walk, on every call.
    const withDefaults = hasDefaults ? Value.Default(schema, Value.Clone(argumentsValue)) : undefined;
    if (withDefaults !== undefined && check.Check(withDefaults)) {
      return { valid: true, value: withDefaults };
    }
    const coerced = undoLossyConversions(argumentsValue, Value.Convert(schema, Value.Default(schema, Value.Clone(argumentsValue))));
    if (check.Check(coerced)) {
      return { valid: true, value: coerced };
    }
    const issues = [...check.Errors(coerced)].map((error) => ({ path: error.path, message: error.message }));
    return { valid: false, message: invalidArgumentsText(toolName, issues, coerced, argumentsValue) };
  };
}

/**
 * Puts back every original value that conversion turned into a different number, so it fails
 * the check instead of reaching the tool altered.
 *
 * Why: TypeBox converts to integers with `Math.trunc` / `parseInt`, so 4.5, "4.5" and "1e3"
 * would pass as 4, 4 and 1. Converted values are a fresh copy, so they are changed in place.
 */
function undoLossyConversions(original: unknown, converted: unknown): unknown {
  if (typeof converted === "number" && (typeof original === "number" || typeof original === "string")) {
    return Object.is(Number(original), converted) ? converted : original;
  }
  if (typeof converted !== "object" || converted === null || typeof original !== "object" || original === null) {
    return converted;
  }
  const target = converted as Record<string, unknown>;
  const source = original as Record<string, unknown>;
  for (const key of Object.keys(target)) {
    if (Object.hasOwn(source, key)) target[key] = undoLossyConversions(source[key], target[key]);
  }
  return converted;
}

function containsDefault(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  if (Array.isArray(schema)) return schema.some(containsDefault);
  if ("default" in schema) return true;
  return Object.values(schema).some(containsDefault);
}
