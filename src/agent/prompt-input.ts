import { InvalidConfigError } from "../errors.js";
import { describe } from "../model/check-model-message.js";
import { checkPrompts } from "../streams/check-config.js";
import type { AgentMessage, PromptInput } from "../types.js";

/**
 * The messages a prompt input stands for; text becomes a user message stamped `timestamp`.
 * Contract: throws an `InvalidConfigError` naming the element when an array holds something that
 * is not a message, or one nested deeper than `maxJsonDepth` (see `checkPrompts`), and naming
 * the input when it is none of the four forms (a JavaScript caller's `undefined`, say).
 */
export function toMessages(input: PromptInput, timestamp: number, maxJsonDepth: number): AgentMessage[] {
  if (typeof input === "string") {
    return [{ role: "user", content: input, timestamp }];
  }
  if (Array.isArray(input)) {
    checkPrompts(input, "The agent", maxJsonDepth);
    return input;
  }
  if (typeof input !== "object" || input === null) {
    throw new InvalidConfigError("input", `The agent takes text, a message, an array of messages or { text, images }, got ${describe(input)}.`);
  }
  if ("role" in input) {
    checkPrompts([input], "The agent", maxJsonDepth);
    return [input];
  }
  const { text, images } = input as { text?: unknown; images?: unknown };
  if (typeof text !== "string") throw new InvalidConfigError("input.text", `The agent takes { text, images } with text a string, got ${describe(text)}.`);
  if (images === undefined || (Array.isArray(images) && images.length === 0)) {
    return [{ role: "user", content: text, timestamp }];
  }
  if (!Array.isArray(images)) throw new InvalidConfigError("input.images", `The agent takes { text, images } with images an array, got ${describe(images)}.`);
  // The images are the caller's objects: checked as any message is.
  const messages = [{ role: "user", content: [{ type: "text", text }, ...images], timestamp }] as AgentMessage[];
  checkPrompts(messages, "The agent", maxJsonDepth);
  return messages;
}
