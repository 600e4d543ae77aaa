import { checkPrompts } from "../streams/check-config.js";
import type { AgentMessage, PromptInput } from "../types.js";

/**
 * The messages a prompt input stands for; text becomes a user message stamped `timestamp`.
 * Contract: throws an `InvalidConfigError` naming the element when an array holds something that
 * is not a message, or one nested deeper than `maxJsonDepth` (see `checkPrompts`).
 */
export function toMessages(input: PromptInput, timestamp: number, maxJsonDepth: number): AgentMessage[] {
  if (typeof input === "string") {
    return [{ role: "user", content: input, timestamp }];
  }
  if (Array.isArray(input)) {
    checkPrompts(input, "The agent", maxJsonDepth);
    return input;
  }
  if ("role" in input) {
    checkPrompts([input], "The agent", maxJsonDepth);
    return [input];
  }
  if (!input.images || input.images.length === 0) {
    return [{ role: "user", content: input.text, timestamp }];
  }
  // The images are the caller's objects: checked as any message is.
  const messages: AgentMessage[] = [{ role: "user", content: [{ type: "text", text: input.text }, ...input.images], timestamp }];
  checkPrompts(messages, "The agent", maxJsonDepth);
  return messages;
}
