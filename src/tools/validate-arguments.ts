import type { Observable } from "rxjs";
import { truncate } from "./argument-errors.js";
import { jsonSchemaCompiler } from "./json-schema-loader.js";
import { type ArgumentValidation, type CompiledSchema, unusableSchemaText } from "./schema-validator.js";
import type { StandardSchemaV1 } from "./standard-schema.js";
import { jsonSchemaOfStandard, standardValidator } from "./standard-validator.js";
import { schemaKindOf, type ToolParameters } from "./tool-schema.js";
import { typeBoxCompiler } from "./typebox-loader.js";
import { MAX_JSON_DEPTH, nestsDeeperThan, tooDeepText } from "../util/json-depth.js";
import { errorText } from "../util/error-text.js";

export type { ArgumentValidation, CompiledSchema } from "./schema-validator.js";

const compiledSchemas = new WeakMap<object, CompiledSchema>();

/**
 * Makes a schema ready once; later calls with the same schema object reuse it, also when it
 * could not be used (then `problem` says why, and every call fails with it).
 *
 * Why a WeakMap on the schema object: compiling costs milliseconds and tools are defined once,
 * so per-call validation is a cached function call.
 */
export function compileSchema(schema: ToolParameters): CompiledSchema {
  let compiled = compiledSchemas.get(schema);
  if (!compiled) {
    compiled = compileOnce(schema);
    compiledSchemas.set(schema, compiled);
  }
  return compiled;
}

function compileOnce(schema: ToolParameters): CompiledSchema {
  if (typeof schema !== "object" || schema === null) {
    return unusable(`expected a schema object, received ${describe(schema)}`);
  }
  try {
    switch (schemaKindOf(schema)) {
      case "typebox":
        return typeBoxCompiler.compiled(schema);
      case "standard": {
        // The model's schema first: a library that cannot convert is reported like a schema that cannot compile.
        const modelSchema = jsonSchemaOfStandard(schema as StandardSchemaV1);
        return { validate: standardValidator(schema as StandardSchemaV1), modelSchema };
      }
      case "json-schema":
        return jsonSchemaCompiler.compiled(schema);
    }
  } catch (error) {
    return unusable(errorText(error));
  }
}

function unusable(problem: string): CompiledSchema {
  return {
    problem,
    modelSchema: { type: "object" },
    validate: (toolName) => ({ valid: false, message: unusableSchemaText(toolName, problem) }),
  };
}

/**
 * Checks a tool call's arguments against the tool's schema, with the coercions models need.
 *
 * A string is taken as raw JSON text (a provider that could not parse the model's output passes
 * it on as is). Anything but an object fails. The value that comes back is the tool's own copy:
 * changing it never changes the transcript's `toolCall.arguments`. For TypeBox 0.34 and JSON
 * Schema, strings are converted where the schema wants numbers, booleans or the like, and
 * defaults are filled in; a conversion never changes a number's value (4.5 is not an integer).
 * Failures name every failing path, what was expected and what arrived, so the model can
 * correct itself. Arguments that nest deeper than `maxJsonDepth` (default `MAX_JSON_DEPTH`, 128;
 * a run passes its own) fail before any schema sees them ("arguments nest deeper than 128
 * levels"). An Observable comes back only from a Standard Schema that validates asynchronously,
 * and from a plain JSON Schema while Ajv, loaded the first time one is seen, has not arrived yet
 * (`import "rxagent/json-schema"` loads it up front).
 */
export function validateArguments(
  toolName: string,
  schema: ToolParameters,
  rawArguments: unknown,
  maxJsonDepth: number = MAX_JSON_DEPTH,
): ArgumentValidation | Observable<ArgumentValidation> {
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
  // Before anything else reads them: validators, `Value.Clone`, the tool's copy and `describe` all recurse.
  if (nestsDeeperThan(argumentsValue, maxJsonDepth)) {
    return { valid: false, message: `Invalid arguments for tool "${toolName}": arguments ${tooDeepText(maxJsonDepth)}.` };
  }
  if (typeof argumentsValue !== "object" || argumentsValue === null || Array.isArray(argumentsValue)) {
    return {
      valid: false,
      message: `Invalid arguments for tool "${toolName}": expected a JSON object, received ${describe(argumentsValue)}.`,
    };
  }
  return compileSchema(schema).validate(toolName, argumentsValue);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value} (${truncate(JSON.stringify(value) ?? String(value))})`;
}
