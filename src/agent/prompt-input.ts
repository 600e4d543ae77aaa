import type { AgentMessage, PromptInput } from "../types.js";

/** The messages a prompt input stands for; text becomes a user message stamped `timestamp`. */
export function toMessages(input: PromptInput, timestamp: number): AgentMessage[] {
  if (typeof input === "string") {
    return [{ role: "user", content: input, timestamp }];
  }
  if (Array.isArray(input)) {
    return input;
  }
  if ("role" in input) {
    return [input];
  }
  if (!input.images || input.images.length === 0) {
    return [{ role: "user", content: input.text, timestamp }];
  }
  return [{ role: "user", content: [{ type: "text", text: input.text }, ...input.images], timestamp }];
}
