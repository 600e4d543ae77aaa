import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";

/** The outcome of checking a tool call's arguments. */
export type ArgumentValidation = { valid: true; value: unknown } | { valid: false; message: string };

interface CompiledSchema {
  check: TypeCheck<TSchema>;
  /** Defaults must be filled even when the raw value already passes. */
  hasDefaults: boolean;
}

const compiledSchemas = new WeakMap<TSchema, CompiledSchema>();

/**
 * Compiles a schema once; later calls with the same schema object reuse it.
 *
 * Why a WeakMap on the schema object: compiling costs milliseconds and tools are defined once,
 * so per-call validation is a cached function call.
 */
export function compileSchema(schema: TSchema): CompiledSchema {
  let compiled = compiledSchemas.get(schema);
  if (!compiled) {
    compiled = { check: TypeCompiler.Compile(schema), hasDefaults: containsDefault(schema) };
    compiledSchemas.set(schema, compiled);
  }
  return compiled;
}

/**
 * Checks a tool call's arguments against the tool's schema, with the coercions models need.
 *
 * Arguments that pass as they are come back unchanged (no copy). Otherwise a copy gets schema
 * defaults filled in and strings converted where the schema wants numbers, booleans or the
 * like, and is checked again. A string is taken as raw JSON text (a provider that could not
 * parse the model's output passes it on as is). A conversion never changes a number's value
 * (4.5 is not an integer). Failures name every failing path, what was expected and what arrived,
 * so the model can correct itself.
 */
export function validateArguments(toolName: string, schema: TSchema, rawArguments: unknown): ArgumentValidation {
  let argumentsValue = rawArguments;
  if (typeof argumentsValue === "string") {
    try {
      argumentsValue = JSON.parse(argumentsValue);
    } catch (error) {
      return {
        valid: false,
        message: `Invalid arguments for tool "${toolName}": not valid JSON (${(error as Error).message}). Received: ${truncate(rawArguments as string)}`,
      };
    }
  }
  if (typeof argumentsValue !== "object" || argumentsValue === null || Array.isArray(argumentsValue)) {
    return {
      valid: false,
      message: `Invalid arguments for tool "${toolName}": expected a JSON object, received ${describe(argumentsValue)}.`,
    };
  }
  const { check, hasDefaults } = compileSchema(schema);
  if (!hasDefaults && check.Check(argumentsValue)) {
    return { valid: true, value: argumentsValue };
  }
  // Arguments that only lacked defaults pass without the conversion walk, on every call.
  const withDefaults = hasDefaults ? Value.Default(schema, Value.Clone(argumentsValue)) : undefined;
  if (withDefaults !== undefined && check.Check(withDefaults)) {
    return { valid: true, value: withDefaults };
  }
  const coerced = undoLossyConversions(
    argumentsValue,
    Value.Convert(schema, Value.Default(schema, Value.Clone(argumentsValue))),
  );
  if (check.Check(coerced)) {
    return { valid: true, value: coerced };
  }
  return { valid: false, message: describeErrors(toolName, check, coerced, argumentsValue) };
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

function describeErrors(toolName: string, check: TypeCheck<TSchema>, value: unknown, received: unknown): string {
  const messagesByPath = new Map<string, string[]>();
  for (const error of check.Errors(value)) {
    const path = error.path === "" ? "/" : error.path;
    const messages = messagesByPath.get(path) ?? [];
    if (!messages.includes(error.message)) messages.push(error.message);
    messagesByPath.set(path, messages);
  }
  const lines = [...messagesByPath].map(([path, messages]) => {
    const actual = valueAt(value, path);
    const receivedText = actual === undefined ? "missing" : `received ${truncate(JSON.stringify(actual) ?? String(actual))}`;
    return `  - ${path}: ${messages.join("; ")} (${receivedText})`;
  });
  return [
    `Invalid arguments for tool "${toolName}":`,
    ...lines,
    `Received arguments: ${truncate(JSON.stringify(received) ?? String(received))}`,
  ].join("\n");
}

function valueAt(value: unknown, path: string): unknown {
  let current = value;
  for (const segment of path.split("/").slice(1)) {
    if (segment === "") continue;
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return current;
}

function containsDefault(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  if (Array.isArray(schema)) return schema.some(containsDefault);
  if ("default" in schema) return true;
  return Object.values(schema).some(containsDefault);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value} (${truncate(JSON.stringify(value) ?? String(value))})`;
}

function truncate(text: string, limit = 500): string {
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length} characters)` : text;
}
