import { describe, expect, it } from "vitest";
import { Agent } from "../../src/streams/agent.js";
import { lastTurnStart, pairToolCalls } from "../../src/streams/repair-transcript.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentMessage, AssistantMessage } from "../../src/types.js";
import { assistantMessage, text, toolCall, toolResultMessage, userMessage } from "../testing/fixtures.js";

const a = toolCall("a", "echo");
const b = toolCall("b", "echo");

describe("lastTurnStart", () => {
  const messages: AgentMessage[] = [userMessage("go"), assistantMessage([a]), toolResultMessage(a, "A"), assistantMessage([text("done")]), userMessage("more")];
  it.each([
    [0, 4],
    [4, 4],
    [5, 5],
  ])("from %i: %i (the last user or assistant message at or after it)", (from, expected) => {
    expect(lastTurnStart(messages, from)).toBe(expected);
  });

  it("a transcript that ends with results: their assistant message, which later results may still pair", () => {
    const open: AgentMessage[] = [userMessage("go"), assistantMessage([a, b]), toolResultMessage(a, "A")];
    expect(lastTurnStart(open, 0)).toBe(1);
    // From there, b is still missing: the part before it was checked, the call itself was not.
    expect(pairToolCalls(open, 7, [], [], 1)).toHaveLength(4);
    expect(pairToolCalls(open, 7, [toolResultMessage(b, "B")], [], 1)).toBeUndefined();
  });
});

describe("an Agent's transcript is checked once per message, not once per prompt", () => {
  it("the tool calls of old messages are not read again by later prompts", async () => {
    let reads = 0;
    const old = assistantMessage([a]);
    const counted: AssistantMessage = {
      ...old,
      get content() {
        reads += 1;
        return old.content;
      },
    };
    const agent = new Agent({ model: scriptedModel(["one", "two", "three", "four"]), messages: [userMessage("go"), counted, toolResultMessage(a, "A")] });
    // The first run checks it; the second checks it again, as the last turn's start of the
    // transcript the first run began with; later runs start after it.
    await agent.run("first");
    await agent.run("second");
    const afterSecond = reads;
    await agent.run("third");
    await agent.run("fourth");
    expect(afterSecond).toBeGreaterThan(0);
    expect(reads).toBe(afterSecond);
    expect(agent.messages.map((message) => message.role)).toStrictEqual([
      "user", "assistant", "toolResult",
      "user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant",
    ]);
  });

  it("a message that is not a model message stays out of every later model call", async () => {
    const model = scriptedModel(["one", "two", "three"]);
    // A custom message type other tests declare (agent-loop.test.ts): not a model message.
    const note: AgentMessage = { role: "notice", text: "kept out", timestamp: 0 };
    const agent = new Agent({ model, messages: [userMessage("go"), assistantMessage([text("hi")]), note] });
    await agent.run("first");
    await agent.run("second");
    await agent.run("third");
    expect(model.calls.map((call) => call.messages.map((message) => message.role))).toStrictEqual([
      ["user", "assistant", "user"],
      ["user", "assistant", "user", "assistant", "user"],
      ["user", "assistant", "user", "assistant", "user", "assistant", "user"],
    ]);
  });

  it("a call left without a result in the middle is paired again in every run (the Agent's transcript keeps it unpaired)", async () => {
    const model = scriptedModel(["one", "two"]);
    const agent = new Agent({ model, messages: [userMessage("go"), assistantMessage([a]), userMessage("again"), assistantMessage([text("ok")])] });
    await agent.run("first");
    await agent.run("second");
    for (const call of model.calls) {
      expect(call.messages.slice(0, 3).map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult"]);
    }
  });
});
