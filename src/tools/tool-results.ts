import type { AgentToolResult } from "../types.js";

/** A result holding one piece of text. */
export function textResult<TDetails = undefined>(text: string, details?: TDetails): AgentToolResult<TDetails | undefined> {
  return { content: [{ type: "text", text }], details };
}

/** The result a failed call gets: its text tells the model what went wrong. */
export function errorResult(message: string): AgentToolResult<Record<string, never>> {
  return { content: [{ type: "text", text: message }], details: {} };
}

/** True when a value has the shape of a tool result (content array of text or image parts). */
export function isToolResult(value: unknown): value is AgentToolResult {
  if (typeof value !== "object" || value === null) return false;
  const content = (value as { content?: unknown }).content;
  return (
    Array.isArray(content) &&
    content.every(
      (part: unknown) =>
        typeof part === "object" &&
        part !== null &&
        (((part as { type?: unknown }).type === "text" && typeof (part as { text?: unknown }).text === "string") ||
          ((part as { type?: unknown }).type === "image" && typeof (part as { data?: unknown }).data === "string")),
    )
  );
}
