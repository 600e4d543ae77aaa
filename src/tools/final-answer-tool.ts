import { defineTool } from "./define-tool.js";
import type { AgentTool } from "../types/tools.js";
import type { OutputSchema } from "../types/output.js";

/** The default name of the tool through which a run with `output` gives its final answer. */
export const FINAL_ANSWER_TOOL = "final_answer";

/** How the final-answer tool presents itself to the model. */
export interface FinalAnswerToolOptions {
  /** Default `final_answer`. */
  name?: string;
  description?: string;
}

/**
 * The tool a model calls to give a structured final answer: its parameters are the output
 * schema, and a call whose arguments validate ends the run (`terminate: true`) with them as the
 * result's `details`. Invalid arguments never reach it: the loop answers them with an error
 * result naming each failing path, so the model can correct itself.
 *
 * Contract: throws a `TypeError` for a schema that does not describe an object (tool arguments
 * are JSON objects): wrap a list or a value in an object, e.g. `Type.Object({ items: ... })`.
 */
export function finalAnswerTool(schema: OutputSchema, options: FinalAnswerToolOptions = {}): AgentTool {
  const type = (schema as { type?: unknown }).type;
  if (type !== undefined && type !== "object") {
    throw new TypeError(
      `output must be an object schema (tool arguments are JSON objects), not "${String(type)}": wrap it, e.g. Type.Object({ answer: ... }).`,
    );
  }
  return defineTool({
    name: options.name ?? FINAL_ANSWER_TOOL,
    label: "Final answer",
    description:
      options.description ??
      "Gives your final answer. Call it once, when you are done, with the answer as its arguments; the conversation ends when they match the schema.",
    parameters: schema,
    execute: (_toolCallId, args) => ({ content: [{ type: "text", text: "Final answer received." }], details: args, terminate: true }),
  });
}
