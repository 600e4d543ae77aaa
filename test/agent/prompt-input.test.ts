import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { toMessages } from "../../src/agent/prompt-input.js";
import { InvalidConfigError } from "../../src/errors.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { PromptInput } from "../../src/types.js";

describe("toMessages", () => {
  it("makes a user message of text, and of { text, images }", () => {
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    expect(toMessages("hi", 5, 64)).toStrictEqual([{ role: "user", content: "hi", timestamp: 5 }]);
    expect(toMessages({ text: "hi" }, 5, 64)).toStrictEqual([{ role: "user", content: "hi", timestamp: 5 }]);
    expect(toMessages({ text: "see", images: [image] }, 5, 64)).toStrictEqual([{ role: "user", content: [{ type: "text", text: "see" }, image], timestamp: 5 }]);
  });

  // Found by a random run of the Agent's methods: these threw "Cannot use 'in' operator to search
  // for 'role' in undefined", or made a user message whose content was a number.
  it("refuses, naming what is wrong, an input that is none of the four forms", () => {
    const cases: Array<[unknown, InvalidConfigError]> = [
      [undefined, new InvalidConfigError("input", "The agent takes text, a message, an array of messages or { text, images }, got missing.")],
      [null, new InvalidConfigError("input", "The agent takes text, a message, an array of messages or { text, images }, got null.")],
      [7, new InvalidConfigError("input", "The agent takes text, a message, an array of messages or { text, images }, got a number.")],
      [{ text: 7 }, new InvalidConfigError("input.text", "The agent takes { text, images } with text a string, got a number.")],
      [{}, new InvalidConfigError("input.text", "The agent takes { text, images } with text a string, got missing.")],
      [{ text: "see", images: "cat.png" }, new InvalidConfigError("input.images", "The agent takes { text, images } with images an array, got a string.")],
    ];
    for (const [input, error] of cases) expect(() => toMessages(input as PromptInput, 0, 64)).toThrow(error);
  });
});

describe("an Agent given an input of none of the four forms", () => {
  it("throws from prompt, steer and followUp, and neither runs nor queues anything", () => {
    const model = scriptedModel(["never"]);
    const agent = new Agent({ model });
    expect(() => agent.prompt(undefined as never)).toThrow(InvalidConfigError);
    expect(() => agent.steer(null as never)).toThrow(InvalidConfigError);
    expect(() => agent.followUp({ text: 7 } as never)).toThrow(InvalidConfigError);
    expect(agent.hasQueuedMessages()).toBe(false);
    expect(agent.state.messages).toStrictEqual([]);
    expect(model.calls).toStrictEqual([]);
  });
});
