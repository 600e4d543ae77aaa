import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../../src/agent/agent.js";
import { agentLoop } from "../../../src/streams/agent-loop.js";
import { lastTurnStart, pairToolCalls } from "../../../src/streams/transcript/repair-transcript.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { textResult } from "../../../src/tools/tool-results.js";
import type { AgentMessage, AssistantMessage, ConvertMessageToLlm, Message, Model } from "../../../src/types.js";
import { assistantMessage, text, toolCall, toolResultMessage, userMessage } from "../../testing/fixtures.js";

const a = toolCall("a", "echo");
const b = toolCall("b", "echo");
const echo = defineTool({ name: "echo", description: "echo", parameters: Type.Object({}), execute: () => textResult("echoed") });

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

/** `model`, also keeping the very arrays it is handed as `LlmContext.messages`, and their roles at the time. */
function keepingLists(model: Model): { model: Model; lists: (readonly Message[])[]; roles: string[][] } {
  const lists: (readonly Message[])[] = [];
  const roles: string[][] = [];
  const stream: Model["stream"] = (context, options) => {
    lists.push(context.messages);
    roles.push(context.messages.map((message) => message.role));
    return model.stream(context, options);
  };
  return { model: { ...model, stream }, lists, roles };
}

describe("an Agent's prompt works on its transcript, not a copy of it", () => {
  it("every model call of every prompt gets the Agent's transcript itself", async () => {
    const { model, lists } = keepingLists(scriptedModel([{ content: [a] }, "one", "two"]));
    const agent = new Agent({ model, tools: [echo], messages: [userMessage("go"), assistantMessage([text("hi")])] });
    await agent.run("first");
    await agent.run("second");
    expect(lists).toHaveLength(3);
    for (const list of lists) expect(list).toBe(agent.messages);
    expect(agent.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "user", "assistant", "toolResult", "assistant", "user", "assistant"]);
  });

  it("convertMessageToLlm: the converted list carries over from prompt to prompt, each message converted once", async () => {
    const converted: AgentMessage[] = [];
    const convertMessageToLlm: ConvertMessageToLlm = (message) => (converted.push(message), message.role === "notice" ? undefined : (message as Message));
    const note: AgentMessage = { role: "notice", text: "kept out", timestamp: 0 };
    const { model, lists } = keepingLists(scriptedModel(["one", { content: [a] }, "two", "three"]));
    const agent = new Agent({ model, tools: [echo], convertMessageToLlm, messages: [userMessage("go"), note] });
    await agent.run("first");
    await agent.run("second");
    await agent.run("third");
    expect(new Set(lists).size).toBe(1);
    expect(lists[0]!.map((message) => message.role)).toStrictEqual(["user", "user", "assistant", "user", "assistant", "toolResult", "assistant", "user"]);
    expect(converted).toStrictEqual(agent.messages.slice(0, -1));
  });

  it("a message that is not a model message: the filtered list carries over too", async () => {
    const note: AgentMessage = { role: "notice", text: "kept out", timestamp: 0 };
    const { model, lists } = keepingLists(scriptedModel(["one", "two", "three"]));
    const agent = new Agent({ model, messages: [userMessage("go"), note] });
    await agent.run("first");
    await agent.run("second");
    await agent.run("third");
    expect(new Set(lists).size).toBe(1);
    expect(lists[0]!.map((message) => message.role)).toStrictEqual(["user", "user", "assistant", "user", "assistant", "user"]);
  });

  it("a conversion that throws leaves nothing of its pass behind: the next prompt's list has each message once", async () => {
    let throwOnce = true;
    const convertMessageToLlm: ConvertMessageToLlm = (message) => {
      if (message.role === "user" && message.content === "bad" && throwOnce) {
        throwOnce = false;
        throw new Error("not now");
      }
      return message as Message;
    };
    const { model, lists } = keepingLists(scriptedModel(["one", "two"]));
    const agent = new Agent({ model, convertMessageToLlm, messages: [userMessage("go"), assistantMessage([text("hi")]), userMessage("bad")] });
    const failed = await agent.run("first");
    expect(failed.map((message) => [message.role, (message as AssistantMessage).stopReason])).toStrictEqual([
      ["user", undefined],
      ["assistant", "error"],
    ]);
    await agent.run("second");
    expect(lists.at(-1)!.map((message) => (message.role === "user" ? message.content : message.role))).toStrictEqual([
      "go", "assistant", "bad", "first", "assistant", "second",
    ]);
  });

  it("prepareNextTurn that replaces the transcript: the run goes on with its own copy, the Agent keeps every message", async () => {
    const { model, lists, roles } = keepingLists(scriptedModel([{ content: [a] }, "done", "again"]));
    const agent = new Agent({
      model,
      tools: [echo],
      messages: [userMessage("old")],
      prepareNextTurn: ({ context }) => ({ context: { ...context, messages: context.messages.slice(1) } }),
    });
    await agent.run("first");
    expect(agent.messages.map((message) => message.role)).toStrictEqual(["user", "user", "assistant", "toolResult", "assistant"]);
    expect(roles).toStrictEqual([
      ["user", "user"],
      ["user", "assistant", "toolResult"],
    ]);
    await agent.run("second");
    expect(lists[2]).toBe(agent.messages);
    expect(agent.messages.map((message) => message.role)).toStrictEqual(["user", "user", "assistant", "toolResult", "assistant", "user", "assistant"]);
  });

  it("agentLoop given an Agent's transcript by its caller works on a copy: the Agent's transcript does not change", async () => {
    const agent = new Agent({ model: scriptedModel(["one"]), messages: [userMessage("go")] });
    const before = [...agent.messages];
    const events = await lastValueFrom(
      agentLoop([userMessage("aside")], { messages: agent.messages as AgentMessage[] }, { model: scriptedModel(["two"]) }).pipe(toArray()),
    );
    expect(events.at(-1)).toMatchObject({ type: "agent_end" });
    expect(agent.messages).toStrictEqual(before);
  });
});
