import type { AgentTool, NeedsApprovalResult, ToolApprovalContext, ToolExecuteResult, ToolExecutionContext, ToolExecutionMode } from "../types.js";
import type { ArgumentsOf, ToolParameters } from "./tool-schema.js";
import { unusableSchemaText } from "./schema-validator.js";
import { compileSchema } from "./validate-arguments.js";

export interface ToolDefinition<TParameters extends ToolParameters, TDetails> {
  name: string;
  /** Name for people; defaults to `name`. */
  label?: string;
  description: string;
  /**
   * The arguments' schema: a TypeBox 0.34 schema or a plain JSON Schema object (draft 2020-12 or
   * draft-07, TypeBox 1.x) goes to the provider unchanged; a Standard Schema (zod 4, valibot,
   * arktype) is sent as the JSON Schema its library converts it to.
   */
  parameters: TParameters;
  execute: (
    toolCallId: string,
    args: ArgumentsOf<TParameters>,
    context: ToolExecutionContext<TDetails>,
  ) => ToolExecuteResult<TDetails>;
  prepareArguments?: (rawArguments: unknown) => unknown;
  executionMode?: ToolExecutionMode;
  concurrency?: number;
  timeoutMs?: number;
  /** See `AgentTool.needsApproval`. */
  needsApproval?: boolean | ((args: ArgumentsOf<TParameters>, context: ToolApprovalContext) => NeedsApprovalResult);
}

/**
 * Defines a tool whose `execute` gets arguments typed from its schema (TypeBox 0.34 `Static`,
 * Standard Schema output; a plain record for JSON Schema).
 *
 * The schema is compiled here, once, so the first call pays no compile cost, and a schema that
 * cannot be compiled (or a Standard Schema whose library cannot give JSON Schema) throws here,
 * naming the tool. A plain JSON Schema is compiled by Ajv, which loads the first time one is
 * seen: until it has loaded, a schema Ajv refuses is reported by the tool's first call instead
 * (`import "rxagent/json-schema"` loads Ajv up front, so this throws at once).
 *
 * @example
 * const add = defineTool({
 *   name: "add",
 *   description: "Adds two numbers",
 *   parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
 *   execute: (_id, { a, b }) => textResult(String(a + b)),
 * });
 */
export function defineTool<TParameters extends ToolParameters, TDetails = unknown>(
  definition: ToolDefinition<TParameters, TDetails>,
): AgentTool<TParameters, TDetails> {
  validateDefinition(definition);
  const { problem } = compileSchema(definition.parameters);
  if (problem !== undefined) throw new TypeError(unusableSchemaText(definition.name, problem));
  // Not `{ ...definition, label }`: once optimized, V8's object spread gave each tool a hidden
  // class of its own, about 220 bytes per tool (bench W5, heap per idle agent); `Object.assign`
  // onto a literal shares one.
  return Object.assign({}, definition, { label: definition.label ?? definition.name });
}

function validateDefinition(definition: { name: string; concurrency?: number; timeoutMs?: number }): void {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(definition.name)) {
    throw new TypeError(
      `Tool name "${definition.name}" is invalid: use 1 to 64 letters, digits, "_" or "-" (what providers accept).`,
    );
  }
  if (definition.concurrency !== undefined && !(definition.concurrency >= 1)) {
    throw new TypeError(`Tool "${definition.name}": concurrency must be at least 1.`);
  }
  if (definition.timeoutMs !== undefined && !(definition.timeoutMs > 0)) {
    throw new TypeError(`Tool "${definition.name}": timeoutMs must be positive.`);
  }
}
