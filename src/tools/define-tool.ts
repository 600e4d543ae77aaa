import type { Static, TSchema } from "@sinclair/typebox";
import type { AgentTool, ToolApprovalAnswer, ToolApprovalContext, ToolExecuteResult, ToolExecutionContext, ToolExecutionMode } from "../types.js";
import { compileSchema } from "./validate-arguments.js";

export interface ToolDefinition<TParameters extends TSchema, TDetails> {
  name: string;
  /** Name for people; defaults to `name`. */
  label?: string;
  description: string;
  /** A TypeBox schema; it goes to the provider unchanged as the tool's JSON Schema. */
  parameters: TParameters;
  execute: (
    toolCallId: string,
    args: Static<TParameters>,
    context: ToolExecutionContext<TDetails>,
  ) => ToolExecuteResult<TDetails>;
  prepareArguments?: (rawArguments: unknown) => unknown;
  executionMode?: ToolExecutionMode;
  concurrency?: number;
  timeoutMs?: number;
  /** See `AgentTool.needsApproval`. */
  needsApproval?: boolean | ((args: Static<TParameters>, context: ToolApprovalContext) => ToolApprovalAnswer);
}

/**
 * Defines a tool whose `execute` gets arguments typed from its TypeBox schema.
 *
 * The schema is compiled here, once, so the first call pays no compile cost.
 *
 * @example
 * const add = defineTool({
 *   name: "add",
 *   description: "Adds two numbers",
 *   parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
 *   execute: (_id, { a, b }) => textResult(String(a + b)),
 * });
 */
export function defineTool<TParameters extends TSchema, TDetails = unknown>(
  definition: ToolDefinition<TParameters, TDetails>,
): AgentTool<TParameters, TDetails> {
  validateDefinition(definition);
  compileSchema(definition.parameters);
  return { ...definition, label: definition.label ?? definition.name };
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
