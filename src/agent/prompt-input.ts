import { checkPrompts } from "../streams/check-config.js";
import type { AgentMessage, PromptInput } from "../types.js";

/**
 * The messages a prompt input stands for; text becomes a user message stamped `timestamp`.
 * Contract: throws an `InvalidConfigError` naming the element when an array holds something that
 * is not a message (see `checkPrompts`).
 */
export function toMessages(input: PromptInput, timestamp: number): AgentMessage[] {
  if (typeof input === "string") {
    return [{ role: "user", content: input, timestamp }];
  }
  if (Array.isArray(input)) {
    checkPrompts(input, "The agent");
    return input;
  }
  if ("role" in input) {
    checkPrompts([input], "The agent");
    return [input];
  }
  if (!input.images || input.images.length === 0) {
    return [{ role: "user", content: input.text, timestamp }];
  }
  return [{ role: "user", content: [{ type: "text", text: input.text }, ...input.images], timestamp }];
}
