import type { Observable } from "rxjs";

/** The outcome of checking a tool call's arguments. */
export type ArgumentValidation = { valid: true; value: unknown } | { valid: false; message: string };

/**
 * Checks an arguments object (already parsed, never the caller's own: validators may change it
 * in place) for the tool named `toolName`. An Observable answer comes from an asynchronous
 * Standard Schema validator, or from a plain JSON Schema while Ajv is still loading.
 */
export type SchemaValidator = (toolName: string, argumentsValue: object) => ArgumentValidation | Observable<ArgumentValidation>;

/** A tool's schema made ready: how to validate, and what the model sees. */
export interface CompiledSchema {
  readonly validate: SchemaValidator;
  /** The JSON Schema the model is sent. */
  readonly modelSchema: object;
  /** Why the schema cannot be used, when it cannot; `validate` then fails every call with it. */
  readonly problem?: string;
}

/** The error for a tool whose `parameters` cannot be used. */
export function unusableSchemaText(toolName: string, problem: string): string {
  return `Tool "${toolName}" has parameters that cannot be used as a schema: ${problem}`;
}
