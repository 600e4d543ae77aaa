import type { AgentTool, ModelTool } from "../types.js";
import { compileSchema } from "./validate-arguments.js";

const modelTools = new WeakMap<AgentTool, ModelTool>();

/**
 * The tools as the model sees them: each with JSON Schema `parameters`.
 *
 * The same array comes back when every schema already is JSON Schema (TypeBox, plain JSON
 * Schema), so the common case costs one look at each tool per model call; a Standard Schema
 * tool is sent as a copy holding its converted schema, made once per tool.
 */
export function modelToolsOf(tools: AgentTool[]): ModelTool[] {
  if (!tools.some(hasStandardSchema)) return tools;
  return tools.map((tool) => {
    if (!hasStandardSchema(tool)) return tool;
    let modelTool = modelTools.get(tool);
    if (!modelTool) {
      modelTool = { name: tool.name, description: tool.description, parameters: compileSchema(tool.parameters).modelSchema };
      modelTools.set(tool, modelTool);
    }
    return modelTool;
  });
}

function hasStandardSchema(tool: AgentTool): boolean {
  const { parameters } = tool;
  return typeof parameters === "object" && parameters !== null && "~standard" in parameters;
}
