import { describe, expect, it } from "vitest";
import { currentModelMessages, type RunState } from "../../src/streams/run-state.js";
import type { AgentMessage } from "../../src/types.js";
import { userMessage } from "../testing/fixtures.js";

function runWith(messages: AgentMessage[]): RunState {
  return { config: {}, context: { messages }, modelMessages: undefined, modelMessagesSeen: 0 } as unknown as RunState;
}

describe("currentModelMessages (the default convertToLlm)", () => {
  const notice = { role: "notice", text: "Build passed", timestamp: 0 } as AgentMessage;

  it("is the transcript itself while it holds only model messages, brought up to date at each call", () => {
    const messages: AgentMessage[] = [userMessage("a")];
    const run = runWith(messages);
    expect(currentModelMessages(run)).toBe(messages);
    messages.push(userMessage("b"));
    expect(currentModelMessages(run)).toBe(messages);
    expect(currentModelMessages(run)).toHaveLength(2);
  });

  it("forks a list of its own at the first other message, and keeps it up to date", () => {
    const first = userMessage("a");
    const second = userMessage("b");
    const third = userMessage("c");
    const messages: AgentMessage[] = [first];
    const run = runWith(messages);
    expect(currentModelMessages(run)).toBe(messages);
    messages.push(notice, second);
    const forked = currentModelMessages(run);
    expect(forked).not.toBe(messages);
    expect(forked).toStrictEqual([first, second]);
    messages.push(third);
    expect(currentModelMessages(run)).toBe(forked);
    expect(forked).toStrictEqual([first, second, third]);
  });

  it("leaves a transcript that starts with another message out from the start", () => {
    const first = userMessage("a");
    const run = runWith([notice, first]);
    expect(currentModelMessages(run)).toStrictEqual([first]);
  });
});
