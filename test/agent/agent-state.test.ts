import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { initialAgentState, reduceAgentState } from "../../src/agent/agent-state.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentEvent, AgentMessage, AgentState } from "../../src/types.js";
import { assistantMessage, text, userMessage } from "../testing/fixtures.js";

/** The state with its transcript behind a proxy that counts how many of its messages are read. */
function countingTranscript(state: AgentState): { state: AgentState; reads: () => number } {
  let reads = 0;
  const messages = new Proxy(state.messages as AgentMessage[], {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads += 1;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { state: { ...state, messages }, reads: () => reads };
}

describe("reduceAgentState over a long session", () => {
  it("appends an ended message in place: the same array, one longer, no message of the transcript read", () => {
    const counted = countingTranscript(initialAgentState([]));
    let state = counted.state;
    const transcript = state.messages;
    for (let turn = 0; turn < 1_000; turn++) {
      const reply = assistantMessage([text(`reply ${turn}`)]);
      for (const event of [
        { type: "message_start", message: userMessage(`prompt ${turn}`) },
        { type: "message_end", message: userMessage(`prompt ${turn}`) },
        { type: "message_start", message: reply },
        { type: "message_update", message: reply, assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "r", partial: reply } },
        { type: "message_end", message: reply },
      ] as AgentEvent[]) {
        state = reduceAgentState(state, event);
      }
      expect(state.messages).toBe(transcript);
    }
    expect(state.messages).toHaveLength(2_000);
    // A copy per message_end would read the whole transcript each time: 1,999,000 reads here.
    expect(counted.reads()).toBe(0);
  });

  it("initialAgentState copies the caller's array, so the caller's stays as it was", () => {
    const callers: AgentMessage[] = [userMessage("old")];
    const state = reduceAgentState(initialAgentState(callers), { type: "message_end", message: userMessage("new") });
    expect(callers).toStrictEqual([userMessage("old")]);
    expect(state.messages).toStrictEqual([userMessage("old"), userMessage("new")]);
  });

  it("an Agent keeps one transcript array across runs, and reset starts a new one", async () => {
    const agent = new Agent({ model: scriptedModel(["one", "two"]) });
    const transcript = agent.state.messages;
    agent.prompt("first").subscribe();
    await agent.waitForIdle();
    agent.prompt("second").subscribe();
    await agent.waitForIdle();
    expect(agent.state.messages).toBe(transcript);
    expect(transcript.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "user", "assistant"]);
    agent.reset();
    expect(agent.state.messages).not.toBe(transcript);
    expect(agent.state.messages).toStrictEqual([]);
  });
});

describe("reduceAgentState at agent_end", () => {
  it("keeps the failure agent_end reports when no assistant message tells it", () => {
    const state = reduceAgentState(initialAgentState([]), { type: "agent_start" });
    const ended = reduceAgentState(state, {
      type: "agent_end",
      messages: [],
      reason: "failed",
      errorMessage: "The steering queue failed: store down",
    });
    expect([ended.isStreaming, ended.errorMessage]).toStrictEqual([false, "The steering queue failed: store down"]);
    const idle = reduceAgentState(state, { type: "agent_end", messages: [], reason: "idle" });
    expect(idle.errorMessage).toBeUndefined();
  });
});
