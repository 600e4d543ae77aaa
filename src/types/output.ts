import type { ArgumentsOf, ToolParameters } from "../tools/tool-schema.js";

/**
 * A schema for a structured final answer: whatever `defineTool` accepts as a tool's
 * `parameters`, so every schema kind a tool can take works here too. Tool arguments are JSON
 * objects, so the schema must describe an object.
 */
export type OutputSchema = ToolParameters;

/** The value an output schema describes: what a tool with it as `parameters` is called with. */
export type OutputOf<TSchema extends OutputSchema> = ArgumentsOf<TSchema>;
