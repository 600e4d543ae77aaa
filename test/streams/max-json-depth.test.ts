import { Type } from "@sinclair/typebox";
import { lastValueFrom, NEVER, Observable, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { InvalidConfigError } from "../../src/errors.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, AssistantMessage, Model, ModelEvent, ToolCall } from "../../src/types.js";
import { deepArgumentsModel } from "../helpers/deep-json.js";
import { userMessage } from "../testing/fixtures.js";

/** `levels` nested arrays: `[[[…]]]`, built without recursion. */
function nested(levels: number): unknown[] {
  let value: unknown[] = [];
  for (let level = 1; level < levels; level++) value = [value];
  return value;
}

const echo = defineTool({
  name: "echo",
  description: "Echoes its items",
  parameters: Type.Object({ items: Type.Array(Type.Unknown()), note: Type.Optional(Type.String({ default: "none" })) }),
  execute: () => ({ content: [{ type: "text", text: "echoed" }], details: {} }),
});

/** A tool whose result's `details` nest `levels` deep. */
function deepResultTool(levels: number): AgentTool {
  return defineTool({ name: "deep", description: "Returns deep details", parameters: Type.Object({}), execute: (): AgentToolResult => ({ content: [{ type: "text", text: "ok" }], details: nested(levels) }) });
}

async function run(prompts: AgentMessage[], tools: AgentTool[], config: AgentLoopConfig): Promise<AgentEvent[]> {
  const events = await lastValueFrom(agentLoop(prompts, { messages: [], tools }, config).pipe(toArray()));
  assertEventGrammar(events);
  // Whatever the run let through can be written out (the wire, the stores, `--json`).
  expect(() => JSON.stringify(events)).not.toThrow();
  return events;
}

function toolEnd(events: AgentEvent[]): Extract<AgentEvent, { type: "tool_execution_end" }> {
  const end = events.find((event) => event.type === "tool_execution_end");
  if (end?.type !== "tool_execution_end") throw new Error("no tool_execution_end");
  return end;
}

const oneCall = (name: string) => scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name, arguments: {} }] }, "done"]);

describe("maxJsonDepth: the run's nesting limit (issue 27, item 1)", () => {
  it("refuses arguments past a lower limit where the model arguments enter, naming the limit", async () => {
    // {"items": [20 levels]} nests 21 deep: fine by the default 128, too deep for 10.
    const events = await run([userMessage("go")], [echo], { model: deepArgumentsModel("echo", 20), maxJsonDepth: 10 });
    expect(events.find((event) => event.type === "tool_execution_start")).toMatchObject({ toolCallId: "call_deep", args: {} });
    expect(toolEnd(events)).toMatchObject({ isError: true, result: { content: [{ type: "text", text: 'Invalid arguments for tool "echo": arguments nest deeper than 10 levels.' }] } });
  });

  it("takes arguments past the default under a higher limit", async () => {
    const events = await run([userMessage("go")], [echo], { model: deepArgumentsModel("echo", 200), maxJsonDepth: 300 });
    expect(toolEnd(events)).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "echoed" }] } });
  });

  it("takes arguments at the highest limit, 1000, through TypeBox's Value.Clone and every write, without overflowing", async () => {
    // {"items": [999 levels]} nests 1000 deep; echo's schema has a default, so validation clones.
    const events = await run([userMessage("go")], [echo], { model: deepArgumentsModel("echo", 999), maxJsonDepth: 1000 });
    expect(toolEnd(events)).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "echoed" }] } });
  });

  it("refuses a tool result past the limit with an error result naming it", async () => {
    const events = await run([userMessage("go")], [deepResultTool(20)], { model: oneCall("deep"), maxJsonDepth: 10 });
    expect(toolEnd(events)).toMatchObject({
      isError: true,
      result: { content: [{ type: "text", text: 'Tool "deep" returned a result that was not kept: its details or content nest deeper than 10 levels.' }] },
    });
  });

  it("keeps a tool result past the default under a higher limit", async () => {
    const events = await run([userMessage("go")], [deepResultTool(200)], { model: oneCall("deep"), maxJsonDepth: 300 });
    expect(toolEnd(events)).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "ok" }] } });
  });

  it("turns an afterToolCall override nested 6,000 deep into an error result, and the run goes on", async () => {
    const events = await run([userMessage("go")], [deepResultTool(1)], { model: oneCall("deep"), afterToolCall: () => ({ details: nested(6000) }) });
    expect(toolEnd(events)).toMatchObject({
      isError: true,
      result: { content: [{ type: "text", text: 'afterToolCall for tool "deep" answered something that is not an override: its details values nest deeper than 128 levels.' }] },
    });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
  });

  it("refuses an override past a lower limit too", async () => {
    const events = await run([userMessage("go")], [deepResultTool(1)], { model: oneCall("deep"), maxJsonDepth: 10, afterToolCall: () => ({ details: nested(20) }) });
    expect(toolEnd(events).result.content).toStrictEqual([{ type: "text", text: 'afterToolCall for tool "deep" answered something that is not an override: its details values nest deeper than 10 levels.' }]);
  });

  it("keeps the final message bounded for a model that deepens a tool call in place after its events passed", async () => {
    // Against ModelEvent's contract (a partial is not changed once handed out), as a hand-written
    // adapter might: one message object and one block, changed in place.
    let calls = 0;
    const model: Model = {
      id: "m",
      provider: "m",
      api: "m",
      stream: () =>
        new Observable<ModelEvent>((subscriber) => {
          const partial: AssistantMessage = { role: "assistant", content: [], api: "m", provider: "m", model: "m", usage: emptyUsage(), stopReason: "stop", timestamp: 0 };
          subscriber.next({ type: "start", partial });
          if (calls++ === 0) {
            const block: ToolCall = { type: "toolCall", id: "call_1", name: "echo", arguments: {} };
            partial.content.push(block);
            subscriber.next({ type: "toolcall_start", contentIndex: 0, partial });
            block.arguments = { items: nested(6000) };
            partial.stopReason = "toolUse";
            subscriber.next({ type: "done", reason: "toolUse", message: partial });
          } else {
            partial.content.push({ type: "text", text: "done" });
            subscriber.next({ type: "done", reason: "stop", message: partial });
          }
          subscriber.complete();
        }),
    };
    const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [echo] }, { model }).pipe(toArray()));
    const ends = events.filter((event) => event.type === "message_end" || event.type === "tool_execution_end" || event.type === "agent_end");
    expect(() => JSON.stringify(ends)).not.toThrow();
    expect(toolEnd(events)).toMatchObject({ isError: true, result: { content: [{ type: "text", text: 'Invalid arguments for tool "echo": arguments nest deeper than 128 levels.' }] } });
  });

  it("refuses a prompt nested 6,000 deep at once, naming the element", () => {
    const deep = { role: "note", content: nested(6000), timestamp: 0 } as unknown as AgentMessage;
    expect(() => agentLoop([userMessage("go"), deep], { messages: [] }, { model: scriptedModel(["hi"]) })).toThrow(
      new InvalidConfigError("prompts[1]", "agentLoop takes messages, but prompts[1] has values that nest deeper than 128 levels."),
    );
  });

  it("refuses a prompt past a lower limit", () => {
    const deep = { role: "note", content: nested(20), timestamp: 0 } as unknown as AgentMessage;
    expect(() => agentLoop([deep], { messages: [] }, { model: scriptedModel(["hi"]), maxJsonDepth: 10 })).toThrow(/prompts\[0\] has values that nest deeper than 10 levels/);
  });

  it("ends the run as failed when a caller's steering queue hands out a message nested 6,000 deep", async () => {
    let drained = false;
    const deep = { role: "note", content: nested(6000), timestamp: 0 } as unknown as AgentMessage;
    // The first drain (before the first model call) hands out the deep message.
    const steering = { drain: () => (drained ? [] : ((drained = true), [deep])), peek: () => [], arrivals: NEVER };
    const events = await run([userMessage("go")], [], { model: scriptedModel(["never asked"]), steering });
    expect(events.map((event) => event.type)).toStrictEqual(["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
    // The first turn fails as a queue that throws does: an error message in place of the model's.
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "failed" });
    expect(events.at(-2)).toMatchObject({
      type: "turn_end",
      message: { role: "assistant", stopReason: "error", errorMessage: "The steering queue gave a message whose values nest deeper than 128 levels; what it gave was not added." },
    });
  });

  it("refuses a prepareNextTurn transcript with a message nested 6,000 deep: the run ends as failed, nothing overflows", async () => {
    const deep = { role: "note", content: nested(6000), timestamp: 0 } as unknown as AgentMessage;
    const events = await run([userMessage("go")], [deepResultTool(1)], {
      model: oneCall("deep"),
      prepareNextTurn: ({ context }) => ({ context: { ...context, messages: [...context.messages, deep] } }),
    });
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end.reason).toBe("failed");
    expect(end.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "prepareNextTurn failed: its context.messages[3] has values that nest deeper than 128 levels" });
  });

  describe("an Agent", () => {
    it("refuses a starting transcript nested 6,000 deep, naming the message", () => {
      const deep = { role: "note", content: nested(6000), timestamp: 0 } as unknown as AgentMessage;
      expect(() => new Agent({ model: scriptedModel(["hi"]), messages: [userMessage("a"), deep] })).toThrow(
        new InvalidConfigError("messages[1]", "The agent's messages[1] has values that nest deeper than 128 levels."),
      );
    });

    const deep = { role: "note", content: nested(6000), timestamp: 0 } as unknown as AgentMessage;

    it("refuses a deep message in prompt, steer and followUp, and in a prompt's images, and keeps its transcript", () => {
      const agent = new Agent({ model: scriptedModel(["hi"]) });
      const message = /prompts\[0\] has values that nest deeper than 128 levels/;
      expect(() => agent.prompt(deep)).toThrow(message);
      expect(() => agent.prompt([deep])).toThrow(message);
      expect(() => agent.steer(deep)).toThrow(message);
      expect(() => agent.followUp([deep])).toThrow(message);
      const image = { type: "image", data: "", mimeType: "image/png", extra: nested(6000) } as never;
      expect(() => agent.prompt({ text: "look", images: [image] })).toThrow(message);
      expect(agent.state.messages).toStrictEqual([]);
      expect(agent.clearQueues()).toStrictEqual({ steering: [], followUp: [] });
    });

    it("passes maxJsonDepth on to its runs", async () => {
      const agent = new Agent({ model: deepArgumentsModel("echo", 20), tools: [echo], maxJsonDepth: 10 });
      const messages = await agent.run("go");
      const result = messages.find((message) => message.role === "toolResult");
      expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: 'Invalid arguments for tool "echo": arguments nest deeper than 10 levels.' }] });
    });

    it("checks messages against its own limit", () => {
      const agent = new Agent({ model: scriptedModel(["hi"]), maxJsonDepth: 10 });
      expect(() => agent.steer({ role: "note", content: nested(20), timestamp: 0 } as unknown as AgentMessage)).toThrow(/nest deeper than 10 levels/);
    });
  });
});
