import { AsyncSubject, catchError, defer, map, type Observable, of } from "rxjs";
import { type ArgumentValidation, type CompiledSchema, unusableSchemaText } from "./schema-validator.js";

/** Ajv's answer for one call: always at once. */
type JsonSchemaValidator = (toolName: string, argumentsValue: object) => ArgumentValidation;
/** Makes a plain JSON Schema ready to validate; throws when the schema cannot compile. */
export type JsonSchemaCompiler = (schema: object) => JsonSchemaValidator;

/** Ajv's compiler, once `rxagent/json-schema` was imported or the first JSON Schema tool loaded it. */
let loadedCompiler: JsonSchemaCompiler | undefined;
/** The load under way (or done); unset again after a failed load, so the next call tries again. */
let loading: AsyncSubject<JsonSchemaCompiler> | undefined;

/** Makes `compiler` the one every JSON Schema uses from now on: what importing `rxagent/json-schema` does. */
export function useJsonSchemaCompiler(compiler: JsonSchemaCompiler): void {
  loadedCompiler ??= compiler;
}

/**
 * A plain JSON Schema made ready with Ajv: at once when Ajv is loaded, else once it has loaded.
 *
 * Why Ajv is not imported up front: it is 86 modules in Node and 116 kB of a browser bundle, and
 * TypeBox 0.34 or Standard Schema tools never use it. So the first JSON Schema seen here starts a
 * dynamic import (bundlers put Ajv in a chunk of its own), and until it has arrived `validate`
 * answers with an Observable, which the loop already waits on as for an asynchronous Standard
 * Schema. Why start it here and not at the first call: schemas are made ready when a tool is
 * defined or first sent to the model, so Ajv has usually loaded before the model asks for a call.
 * `problem` stays unknown until then; a schema Ajv refuses fails each of its calls with the reason.
 */
export function jsonSchemaCompiled(schema: object): CompiledSchema {
  if (loadedCompiler) return { validate: loadedCompiler(schema), modelSchema: schema };
  let validator: JsonSchemaValidator | undefined;
  const validatorOf = (compiler: JsonSchemaCompiler): JsonSchemaValidator => (validator ??= compiledOrRefusing(compiler, schema));
  loadCompiler();
  return {
    modelSchema: schema,
    validate: (toolName, argumentsValue) => {
      if (loadedCompiler) return validatorOf(loadedCompiler)(toolName, argumentsValue);
      return loadCompiler().pipe(
        map((compiler) => validatorOf(compiler)(toolName, argumentsValue)),
        catchError((error: unknown) =>
          of<ArgumentValidation>({
            valid: false,
            message: `Tool "${toolName}" has a JSON Schema, and its validator (Ajv) could not be loaded: ${errorText(error)}`,
          }),
        ),
      );
    },
  };
}

/** The schema's validator, or one that refuses every call with the reason Ajv could not compile it. */
function compiledOrRefusing(compiler: JsonSchemaCompiler, schema: object): JsonSchemaValidator {
  try {
    return compiler(schema);
  } catch (error) {
    const problem = errorText(error);
    return (toolName) => ({ valid: false, message: unusableSchemaText(toolName, problem) });
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Starts loading Ajv unless a load is under way; emits its compiler once loaded. */
function loadCompiler(): Observable<JsonSchemaCompiler> {
  if (loading) return loading;
  const attempt = new AsyncSubject<JsonSchemaCompiler>();
  loading = attempt;
  // The one Promise here is the module load, wrapped once; an AsyncSubject keeps its outcome for every waiter.
  defer(() => import("./json-schema-validator.js")).subscribe({
    next: (module) => {
      useJsonSchemaCompiler(module.jsonSchemaValidator);
      attempt.next(loadedCompiler!);
      attempt.complete();
    },
    error: (error: unknown) => {
      loading = undefined;
      attempt.error(error);
    },
  });
  return attempt;
}
