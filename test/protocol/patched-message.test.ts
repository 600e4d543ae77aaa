import { describe, expect, it } from "vitest";
import { PatchedMessage } from "../../src/protocol/patched-message.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AssistantMessage } from "../../src/types.js";

const message: AssistantMessage = {
  role: "assistant",
  content: [
    { type: "text", text: "a" },
    { type: "toolCall", id: "c1", name: "f", arguments: { big: "x".repeat(1000) } },
  ],
  api: "a",
  provider: "p",
  model: "m",
  usage: emptyUsage(),
  stopReason: "stop",
  timestamp: 1,
};

describe("PatchedMessage", () => {
  it("holds no block of a message it was cleared of", () => {
    const patched = new PatchedMessage();
    patched.load(message, 1, [{ i: 1, text: '{"big":"x' }]);
    patched.clear();
    // Why: a server's encoder kept a finished reply's blocks (a megabyte of arguments) until the next reply.
    expect(patched.length).toBe(0);
    expect(patched.at(1)).toBeUndefined();
    expect(patched.argumentTexts()).toEqual([]);
  });

  it("derives a call's arguments from the text its deltas streamed (j), and forgets the text when the call ends", () => {
    const patched = new PatchedMessage();
    patched.load({ ...message, content: [{ type: "toolCall", id: "c1", name: "f", arguments: {} }] });
    patched.appendArguments(0, '{"city":"Par');
    patched.apply([{ i: 0, k: "arguments", j: 1 }]);
    expect(patched.current?.content[0]).toEqual({ type: "toolCall", id: "c1", name: "f", arguments: { city: "Par" } });
    patched.appendArguments(0, 'is"}');
    patched.apply([{ i: 0, k: "arguments", j: 1 }], 0);
    expect(patched.current?.content[0]).toEqual({ type: "toolCall", id: "c1", name: "f", arguments: { city: "Paris" } });
    expect(patched.argumentTexts()).toEqual([]);
  });

  it("makes the message when it is read: once per change, and one read before a change keeps what it saw", () => {
    const patched = new PatchedMessage();
    patched.load({ ...message, content: [{ type: "text", text: "a" }] });
    const first = patched.current;
    expect(patched.current).toBe(first);
    patched.apply([{ i: 0, k: "text", a: "b" }]);
    patched.apply([{ i: 0, k: "text", a: "c" }, { k: "responseId", v: "r1" }]);
    const second = patched.current;
    expect(second).not.toBe(first);
    expect(second).toMatchObject({ content: [{ type: "text", text: "abc" }], responseId: "r1" });
    expect(first?.content).toEqual([{ type: "text", text: "a" }]);
    expect(patched.ownFields).toMatchObject({ responseId: "r1", content: [] });
    patched.clear();
    expect(patched.current).toBeUndefined();
    expect(patched.ownFields).toBeUndefined();
  });
});
