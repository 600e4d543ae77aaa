import type { defineTool, ToolDefinition } from "../tools/define-tool.js";

/**
 * A schema for a structured final answer: whatever `defineTool` accepts as a tool's
 * `parameters`, so every schema kind a tool can take works here too. Tool arguments are JSON
 * objects, so the schema must describe an object.
 */
export type OutputSchema = Parameters<typeof defineTool>[0]["parameters"];

/** The value an output schema describes: what a tool with it as `parameters` is called with. */
export type OutputOf<TSchema extends OutputSchema> = Parameters<ToolDefinition<TSchema, unknown>["execute"]>[1];
