import { describe, expect, it } from "vitest";
import { applyMessageChanges, messageChanges } from "../../src/testing/message-changes.js";
import type { AssistantMessage } from "../../src/types.js";
import { assistantMessage, text, toolCall } from "./fixtures.js";

/** Encodes a sequence of messages as changes, then decodes them through JSON, as a cassette does. */
function roundTrip(messages: AssistantMessage[]): AssistantMessage[] {
  let encodedFrom: AssistantMessage | undefined;
  const encoded = messages.map((message) => {
    const changes = messageChanges(encodedFrom, message);
    encodedFrom = message;
    return JSON.parse(JSON.stringify(changes ?? null)) as ReturnType<typeof messageChanges> | null;
  });
  let decoded: AssistantMessage | undefined;
  return encoded.map((changes) => (decoded = applyMessageChanges(decoded, changes ?? undefined)));
}

describe("message changes", () => {
  it("stores a grown text as the appended part and an unchanged message as nothing", () => {
    const first = assistantMessage([text("Hel")]);
    const second = assistantMessage([text("Hello")]);
    expect(messageChanges(first, second)).toStrictEqual({ content: { length: 1, blocks: { 0: { append: { text: "lo" } } } } });
    expect(messageChanges(second, assistantMessage([text("Hello")]))).toBeUndefined();
  });

  it("restores every message of a sequence: new blocks, replaced values, removed fields, a shorter content", () => {
    const messages: AssistantMessage[] = [
      assistantMessage([]),
      assistantMessage([text("")]),
      assistantMessage([text("Let me")]),
      assistantMessage([text("Let me"), toolCall("call_1", "calculator", {})]),
      assistantMessage([text("Let me"), toolCall("call_1", "calculator", { expression: "1+" })]),
      { ...assistantMessage([text("Let me"), toolCall("call_1", "calculator", { expression: "1+2" })]), responseId: "r1" },
      assistantMessage([text("Let me!")], { stopReason: "error", errorMessage: "boom" }),
    ];
    expect(roundTrip(messages)).toStrictEqual(messages);
  });

  it("keeps a long reply linear in size, not quadratic", () => {
    const words = Array.from({ length: 400 }, (_unused, index) => `word${index} `);
    const messages = words.map((_word, index) => assistantMessage([text(words.slice(0, index + 1).join(""))]));
    let previous: AssistantMessage | undefined;
    const size = messages.reduce((total, message) => {
      const changes = messageChanges(previous, message);
      previous = message;
      return total + JSON.stringify(changes).length;
    }, 0);
    const fullText = words.join("").length;
    // Each step stores one word plus about sixty characters of structure (28 kB in all);
    // whole messages would take 720 kB here.
    expect(size).toBeLessThan(fullText + 400 * 70);
    expect(roundTrip(messages)).toStrictEqual(messages);
  });
});
