import { describe, expect, it } from "vitest";
import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { Agent, defineTool, InvalidStateError, textResult } from "../../src/index.js";
import type { AgentEvent, AgentMessage, AssistantMessage } from "../../src/index.js";
import { assertEventGrammar, scriptedModel } from "../../src/testing/index.js";

const echo = defineTool({
  name: "echo",
  description: "Echoes",
  parameters: Type.Object({ text: Type.String() }),
  execute: (_id, { text }) => textResult(text),
});

function assistantWithCall(id: string, stopReason: AssistantMessage["stopReason"] = "toolUse"): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "toolCall", id, name: "echo", arguments: { text: "x" } }],
    api: "scripted",
    provider: "scripted",
    model: "scripted",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason,
    timestamp: 1,
  };
}

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 0 });

async function run(events$: ReturnType<Agent["continue"]>): Promise<AgentEvent[]> {
  const events = await lastValueFrom(events$.pipe(toArray()));
  assertEventGrammar(events);
  return events;
}

describe("Agent.continue", () => {
  it("resumes from a user message without adding one", async () => {
    const model = scriptedModel(["answer"]);
    const agent = new Agent({ model, messages: [user("question")] });
    await run(agent.continue());
    expect(model.calls[0]?.messages).toStrictEqual([user("question")]);
    expect(agent.messages.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant"]);
  });

  it("resumes from tool results", async () => {
    const model = scriptedModel(["done"]);
    const result: AgentMessage = { role: "toolResult", toolCallId: "c1", toolName: "echo", content: [{ type: "text", text: "x" }], isError: false, timestamp: 2 };
    const agent = new Agent({ model, tools: [echo], messages: [user("go"), assistantWithCall("c1"), result] });
    await run(agent.continue());
    expect(model.calls[0]?.messages).toHaveLength(3);
  });

  it("repairs tool calls left without results by a crash, then resumes", async () => {
    const model = scriptedModel(["recovered"]);
    const agent = new Agent({ model, tools: [echo], messages: [user("go"), assistantWithCall("c1")] });
    const events = await run(agent.continue());
    const repaired = agent.messages[2] as { role: string; toolCallId: string; isError: boolean; content: { text: string }[] };
    expect([repaired.role, repaired.toolCallId, repaired.isError, repaired.content[0]?.text]).toStrictEqual([
      "toolResult",
      "c1",
      true,
      "The tool call was interrupted before the tool finished.",
    ]);
    expect(events.filter((event) => event.type === "message_end").map((event) => (event as { message: { role: string } }).message.role)).toStrictEqual([
      "toolResult",
      "assistant",
    ]);
    expect(model.calls[0]?.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult"]);
  });

  it("does not invent results for the tool calls of an aborted message", async () => {
    const agent = new Agent({ model: scriptedModel([]), messages: [user("go"), assistantWithCall("c1", "aborted")] });
    expect(() => agent.continue()).toThrow(/no messages are queued/);
  });

  it("runs queued messages when the transcript ends with an assistant message", async () => {
    const model = scriptedModel(["sure"]);
    const agent = new Agent({ model, messages: [user("hi"), { ...assistantWithCall("c0", "stop"), content: [{ type: "text", text: "hello" }] }] });
    agent.followUp("and now?");
    await run(agent.continue());
    expect(model.calls[0]?.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "user"]);
    expect(agent.state.queuedFollowUp).toBe(0);
  });

  it("delivers queued steering one message per turn, as the reference does (one-at-a-time)", async () => {
    const model = scriptedModel(["first", "second"]);
    const agent = new Agent({ model, messages: [user("hi"), { ...assistantWithCall("c0", "stop"), content: [{ type: "text", text: "hello" }] }] });
    agent.steer("one");
    agent.steer("two");
    await run(agent.continue());
    const userTexts = (call: number): unknown[] => (model.calls[call]?.messages ?? []).filter((message) => message.role === "user").map((message) => message.content);
    expect(model.calls).toHaveLength(2);
    expect(userTexts(0)).toStrictEqual(["hi", "one"]);
    expect(userTexts(1)).toStrictEqual(["hi", "one", "two"]);
    expect(agent.state.queuedSteering).toBe(0);
  });

  it("fails clearly with nothing to continue", () => {
    expect(() => new Agent({ model: scriptedModel([]) }).continue()).toThrow(InvalidStateError);
    // The reference's sentences, so code written against pi-agent-core matches; then ours.
    expect(() => new Agent({ model: scriptedModel([]) }).continue()).toThrow("No messages to continue from: the transcript is empty. Use prompt() to start.");
    const ended = new Agent({ model: scriptedModel([]), messages: [user("hi"), { ...assistantWithCall("c0", "stop"), content: [] }] });
    expect(() => ended.continue()).toThrow("Cannot continue from message role: assistant: the transcript ends with an assistant message and no messages are queued.");
  });

  it("round-trips through a snapshot, queued messages included", async () => {
    const agent = new Agent({ model: scriptedModel(["one"]), systemPrompt: "be kind" });
    await run(agent.prompt("hi"));
    agent.followUp("queued");
    const snapshot = JSON.parse(JSON.stringify(agent.snapshot()));
    const model = scriptedModel(["two"]);
    const restored = Agent.fromSnapshot(snapshot, { model });
    expect(restored.messages).toStrictEqual(agent.messages);
    expect(restored.state.queuedFollowUp).toBe(1);
    await run(restored.continue());
    expect(model.calls[0]?.systemPrompt).toBe("be kind");
    expect((restored.messages[2] as { content: string }).content).toBe("queued");
  });

  it("reset forgets the transcript, queues and totals", async () => {
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "text", text: "a" }], usage: { input: 5 } }]) });
    await run(agent.prompt("hi"));
    agent.followUp("later");
    agent.reset();
    expect(agent.messages).toStrictEqual([]);
    expect(agent.state.queuedFollowUp).toBe(0);
    expect(agent.state.usage.input).toBe(0);
  });
});
