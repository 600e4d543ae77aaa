import { catchError, defer, from, map, type Observable, of } from "rxjs";
import { type ArgumentValidation, type CompiledSchema, unusableSchemaText } from "./schema-validator.js";
import { errorText } from "../util/error-text.js";

/** A compiled schema's answer for one call: always at once. */
export type SynchronousValidator = (toolName: string, argumentsValue: object) => ArgumentValidation;
/** Makes a schema ready to validate; throws when the schema cannot compile. */
export type SchemaCompiler = (schema: object) => SynchronousValidator;
/** A check that needs no compiler: a call's answer, or `undefined` when only the compiler can give it. */
export type QuickValidator = (toolName: string, argumentsValue: object) => ArgumentValidation | undefined;

/** A schema compiler that is loaded the first time a schema of its kind is seen. */
export interface LazyCompiler {
  /** Makes `compiler` the one every schema of this kind uses from now on: what importing its entry point does. */
  use(compiler: SchemaCompiler): void;
  /** The schema made ready: at once when the compiler is loaded, else once it has loaded. */
  compiled(schema: object): CompiledSchema;
}

/** Names the schema kind and its compiler in the error of a call whose compiler could not be loaded. */
export interface LazyCompilerNames {
  /** "a JSON Schema" */
  readonly schema: string;
  /** "Ajv" */
  readonly compiler: string;
}

/**
 * A compiler imported on first need: the first schema of its kind starts `load` (a dynamic
 * import; bundlers put it in a chunk of its own), and until it has arrived that schema's
 * `validate` answers with an Observable, which the loop already waits on as for an asynchronous
 * Standard Schema. A failed load is tried again at the next call.
 *
 * Why start at the schema and not at the first call: schemas are made ready when a tool is
 * defined or first sent to the model, so the compiler has usually loaded before the model asks
 * for a call. `problem` stays unknown until then; a schema the compiler refuses fails each of
 * its calls with the reason.
 *
 * With `quick`, a schema it covers starts no load: until the compiler is there (loaded for
 * another schema, or by the entry point), its calls are answered by `quick`, and only a call
 * `quick` cannot answer loads the compiler and waits for it. Why: loading a compiler is a large
 * part of a fresh process's first run (typebox-plain-check.ts has the figure), and a process
 * whose calls all pass a plain schema never needs it.
 */
export function lazyCompiler(
  names: LazyCompilerNames,
  load: () => Promise<SchemaCompiler>,
  quick?: (schema: object) => QuickValidator | undefined,
): LazyCompiler {
  let loadedCompiler: SchemaCompiler | undefined;
  /** The load under way (or done); unset again after a failed load, so the next call tries again. */
  let loading: Promise<SchemaCompiler> | undefined;

  const use = (compiler: SchemaCompiler): void => {
    loadedCompiler ??= compiler;
  };

  const startLoading = (): Promise<SchemaCompiler> => {
    if (loading) return loading;
    const attempt = load().then(
      (compiler) => {
        use(compiler);
        return loadedCompiler!;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    );
    // Handled here so a load nobody waits for is not an unhandled rejection; waiters get it through `from`.
    attempt.catch(() => undefined);
    loading = attempt;
    return attempt;
  };

  // The one Promise here is the module load. Why each waiter subscribes to it itself (and not to
  // one shared subject): a Promise's callback runs in the async context of the code that waited,
  // so a call validated while the compiler loads goes on in its run's context (OpenTelemetry's
  // active span), not in the context of whichever tool started the load.
  const loadCompiler = (): Observable<SchemaCompiler> => defer(() => from(startLoading()));

  const compiled = (schema: object): CompiledSchema => {
    if (loadedCompiler) return { validate: loadedCompiler(schema), modelSchema: schema };
    let validator: SynchronousValidator | undefined;
    const validatorOf = (compiler: SchemaCompiler): SynchronousValidator => (validator ??= compiledOrRefusing(compiler, schema));
    const quickValidator = quick?.(schema);
    if (!quickValidator) startLoading();
    return {
      modelSchema: schema,
      validate: (toolName, argumentsValue) => {
        if (loadedCompiler) return validatorOf(loadedCompiler)(toolName, argumentsValue);
        const answer = quickValidator?.(toolName, argumentsValue);
        if (answer) return answer;
        return loadCompiler().pipe(
          map(validatorOf),
          catchError((error: unknown) =>
            of<SynchronousValidator>(() => ({
              valid: false,
              message: `Tool "${toolName}" has ${names.schema}, and its validator (${names.compiler}) could not be loaded: ${errorText(error)}`,
            })),
          ),
          // After the catch: a validator that throws is not a failed load (the caller says why).
          map((validator) => validator(toolName, argumentsValue)),
        );
      },
    };
  };

  return { use, compiled };
}

/** The schema's validator, or one that refuses every call with the reason the compiler refused the schema. */
function compiledOrRefusing(compiler: SchemaCompiler, schema: object): SynchronousValidator {
  try {
    return compiler(schema);
  } catch (error) {
    const problem = errorText(error);
    return (toolName) => ({ valid: false, message: unusableSchemaText(toolName, problem) });
  }
}
