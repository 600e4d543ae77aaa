/**
 * Failures found at the edges (issue 14): a provider's bad event, a duplicate tool-call id, a
 * tool's broken thenable, hooks that answer nothing. Each ends the run as data, with `agent_end`.
 */
import { Type } from "@sinclair/typebox";
import { Observable } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentMessage, AssistantMessage, Model, ModelEvent, ToolResultMessage } from "../../src/types.js";
import { emptyUsage } from "../../src/types/messages.js";
import { assistantMessage, expectOneResultPerToolCall, text, toolCall, userMessage } from "../testing/fixtures.js";

const prompt = userMessage("go");

/** Collects a run's events; an Observable error is recorded apart, so a test sees it. */
function collect(source: Observable<AgentEvent>): { events: AgentEvent[]; errors: unknown[] } {
  const events: AgentEvent[] = [];
  const errors: unknown[] = [];
  source.subscribe({ next: (event) => events.push(event), error: (error: unknown) => errors.push(error) });
  return { events, errors };
}

function modelOf(stream: Model["stream"]): Model {
  return { id: "edge", provider: "edge", api: "edge", stream };
}

/** A model that sends the given events, then completes. */
function modelSending(...events: unknown[]): Model {
  return modelOf(
    () =>
      new Observable<ModelEvent>((subscriber) => {
        for (const event of events) subscriber.next(event as ModelEvent);
        subscriber.complete();
      }),
  );
}

/** The error assistant message the loop makes when the model sent nothing usable. */
function errorAssistant(errorMessage: string, content: AssistantMessage["content"] = []): AssistantMessage {
  return {
    role: "assistant",
    content,
    api: "edge",
    provider: "edge",
    model: "edge",
    usage: emptyUsage(),
    stopReason: "error",
    timestamp: 0,
    errorMessage,
  };
}

/** The whole event sequence of a one-turn run whose assistant message is `message`. */
function oneTurn(message: AssistantMessage): AgentEvent[] {
  return [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "message_start", message: prompt },
    { type: "message_end", message: prompt },
    { type: "message_start", message },
    { type: "message_end", message },
    { type: "turn_end", message, toolResults: [] },
    { type: "agent_end", messages: [prompt, message], reason: message.stopReason === "stop" ? "idle" : message.stopReason === "aborted" ? "aborted" : "failed", usage: emptyUsage() },
  ];
}

describe("a provider's bad events end the run as data", () => {
  const scheduler = { now: () => 0 } as never;

  it("a done event without a message: an error message saying so, then turn_end and agent_end", () => {
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model: modelSending({ type: "done", reason: "stop" }), scheduler }));
    expect(errors).toStrictEqual([]);
    expect(events).toStrictEqual(oneTurn(errorAssistant('Model sent a "done" event whose message is missing')));
  });

  it("an error event without a message: an error message saying so", () => {
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model: modelSending({ type: "error", reason: "error" }), scheduler }));
    expect(errors).toStrictEqual([]);
    expect(events).toStrictEqual(oneTurn(errorAssistant('Model sent a "error" event whose message is missing')));
  });

  it("a final message without content: an error message that keeps what was streamed", () => {
    const partial = assistantMessage([text("Hel")]);
    const { stopReason: _stopReason, ...finalWithoutContent } = { ...partial, content: undefined };
    const model = modelSending({ type: "start", partial }, { type: "done", reason: "stop", message: finalWithoutContent });
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model, scheduler }));
    expect(errors).toStrictEqual([]);
    const failed: AssistantMessage = { ...partial, stopReason: "error", errorMessage: 'Model sent a "done" event whose message has content that is missing, not an array' };
    expect(events).toStrictEqual([
      { type: "agent_start" },
      { type: "turn_start" },
      { type: "message_start", message: prompt },
      { type: "message_end", message: prompt },
      { type: "message_start", message: partial },
      { type: "message_end", message: failed },
      { type: "turn_end", message: failed, toolResults: [] },
      { type: "agent_end", messages: [prompt, failed], reason: "failed", usage: emptyUsage() },
    ]);
  });

  it("a final message without usage gets zero usage, so the Agent's totals stay numbers", async () => {
    const { usage: _usage, ...withoutUsage } = assistantMessage([text("Hi")]);
    const agent = new Agent({ model: modelSending({ type: "done", reason: "stop", message: withoutUsage }), scheduler });
    const events: AgentEvent[] = [];
    agent.prompt("go").subscribe((event) => events.push(event));
    await agent.waitForIdle();
    assertEventGrammar(events);
    expect(agent.messages[1]).toStrictEqual(assistantMessage([text("Hi")]));
    expect(agent.state.usage).toStrictEqual(emptyUsage());
  });

  it("a null event: an error message, no TypeError", () => {
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model: modelSending(null), scheduler }));
    expect(errors).toStrictEqual([]);
    expect(events).toStrictEqual(oneTurn(errorAssistant("Model sent an event that is null, not an object")));
  });

  // Found by arbitrary-model-events.test.ts: the message without a role went out as the
  // message_start and message_update of the turn, the one whose role was "user" into the transcript.
  it("a partial without the assistant's role is skipped, and a final message with another role is an error message", () => {
    const roleless = { content: [text("Hi")] };
    const final = { ...assistantMessage([text("Hi")]), role: "user" };
    const model = modelSending({ type: "start", partial: roleless }, { type: "text_delta", contentIndex: 0, delta: "Hi", partial: roleless }, { type: "done", reason: "stop", message: final });
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model, scheduler }));
    expect(errors).toStrictEqual([]);
    expect(events).toStrictEqual(oneTurn(errorAssistant('Model sent a "done" event whose message has role "user", not "assistant"')));
  });

  it("a final message without a role: an error message saying so", () => {
    const { role: _role, ...roleless } = assistantMessage([text("Hi")]);
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model: modelSending({ type: "done", reason: "stop", message: roleless }), scheduler }));
    expect(errors).toStrictEqual([]);
    expect(events).toStrictEqual(oneTurn(errorAssistant('Model sent a "done" event whose message has no role, not "assistant"')));
  });

  // Found by arbitrary-model-events.test.ts: the message the loop ended with kept the partial's
  // `undefined` block, and a transcript reader's `block.type` threw.
  it("a stream that ends without a final message: the message built from its partial keeps only object blocks, with usage", () => {
    const { usage: _usage, ...partialWithoutUsage } = assistantMessage([text("Hel")]);
    const partial = { ...partialWithoutUsage, content: [text("Hel"), undefined, 7] };
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model: modelSending({ type: "start", partial }), scheduler }));
    expect(errors).toStrictEqual([]);
    const ended = events.find((event) => event.type === "message_end" && event.message.role === "assistant");
    expect(ended).toStrictEqual({
      type: "message_end",
      message: { ...assistantMessage([text("Hel")]), stopReason: "error", errorMessage: "Model stream completed without a done or error event" },
    });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "failed" });
  });

  it("events without a partial are skipped: no message_start with an undefined message", () => {
    const final = assistantMessage([text("Hi")]);
    const model = modelSending({ type: "start" }, { type: "text_delta", contentIndex: 0, delta: "Hi" }, { type: "done", reason: "stop", message: final });
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model, scheduler }));
    expect(errors).toStrictEqual([]);
    expect(events).toStrictEqual(oneTurn(final));
  });

  it("an Agent whose model sends a done without a message stays usable: idle, abortable, nothing undefined stored", async () => {
    const stored: unknown[] = [];
    const store = { load: async () => [], append: (message: AgentMessage) => stored.push(message), clear: () => undefined };
    const agent = new Agent({ model: modelSending({ type: "done", reason: "stop" }), store, scheduler });
    const events: AgentEvent[] = [];
    agent.prompt("go").subscribe((event) => events.push(event));
    await agent.waitForIdle();
    assertEventGrammar(events);
    expect(agent.isRunning).toBe(false);
    expect(stored).toStrictEqual([
      { role: "user", content: "go", timestamp: 0 },
      errorAssistant('Model sent a "done" event whose message is missing'),
    ]);
    expect(agent.state.errorMessage).toBe('Model sent a "done" event whose message is missing');
  });
});

describe("abort during the model stream", () => {
  const usage = { ...emptyUsage(), input: 12, output: 3, totalTokens: 15 };

  it("keeps the final message a provider reports as its signal fires: its content, usage and error text", () => {
    const partial: AssistantMessage = { ...assistantMessage([text("Hal")]), api: "edge", provider: "edge", model: "edge" };
    const reported: AssistantMessage = { ...partial, usage, stopReason: "aborted", errorMessage: "Stopped by the provider after 3 tokens" };
    const model = modelOf(
      (_context, { signal }) =>
        new Observable<ModelEvent>((subscriber) => {
          subscriber.next({ type: "start", partial });
          signal.addEventListener("abort", () => {
            subscriber.next({ type: "error", reason: "aborted", error: reported });
            subscriber.complete();
          });
        }),
    );
    const controller = new AbortController();
    const { events, errors } = collect(agentLoop([prompt], { messages: [] }, { model, signal: controller.signal }));
    controller.abort();
    expect(errors).toStrictEqual([]);
    expect(events.slice(4)).toStrictEqual([
      { type: "message_start", message: partial },
      { type: "message_end", message: reported },
      { type: "turn_end", message: reported, toolResults: [] },
      { type: "agent_end", messages: [prompt, reported], reason: "aborted", usage },
    ]);
  });

  it("still ends at once with an aborted message when the provider reports nothing", () => {
    const partial: AssistantMessage = { ...assistantMessage([text("Hal")]), api: "edge", provider: "edge", model: "edge" };
    const model = modelOf(
      () =>
        new Observable<ModelEvent>((subscriber) => {
          subscriber.next({ type: "start", partial });
        }),
    );
    const controller = new AbortController();
    const { events } = collect(agentLoop([prompt], { messages: [] }, { model, signal: controller.signal }));
    controller.abort();
    const aborted: AssistantMessage = { ...partial, stopReason: "aborted", errorMessage: "Request was aborted" };
    expect(events.slice(4)).toStrictEqual([
      { type: "message_start", message: partial },
      { type: "message_end", message: aborted },
      { type: "turn_end", message: aborted, toolResults: [] },
      { type: "agent_end", messages: [prompt, aborted], reason: "aborted", usage: emptyUsage() },
    ]);
  });
});

describe("tool calls", () => {
  const echo = defineTool({
    name: "echo",
    description: "echo",
    parameters: Type.Object({ text: Type.String() }),
    execute: (_id, { text: value }) => textResult(value),
  });

  it("two calls with the same id: the second gets a fresh id, in the transcript and in every event, and each call one result", () => {
    const model = scriptedModel([
      {
        content: [
          { type: "toolCall", id: "call_1", name: "echo", arguments: { text: "a" } },
          { type: "toolCall", id: "call_1", name: "echo", arguments: { text: "b" } },
        ],
      },
      "done",
    ]);
    const { events, errors } = collect(agentLoop([prompt], { messages: [], tools: [echo] }, { model }));
    expect(errors).toStrictEqual([]);
    expectOneResultPerToolCall(events);
    const end = events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
    const assistant = end.messages[1] as AssistantMessage;
    expect(assistant.content).toStrictEqual([toolCall("call_1", "echo", { text: "a" }), toolCall("call_1_2", "echo", { text: "b" })]);
    expect(end.messages.slice(2, 4).map((message) => [(message as ToolResultMessage).toolCallId, (message as ToolResultMessage).content])).toStrictEqual([
      ["call_1", [text("a")]],
      ["call_1_2", [text("b")]],
    ]);
    expect(events.filter((event) => event.type === "tool_execution_start").map((event) => event.toolCallId)).toStrictEqual(["call_1", "call_1_2"]);
    // The next model call gets the renamed transcript.
    expect(model.calls[1]!.messages[1]).toStrictEqual(assistant);
  });

  it("a tool returning a thenable whose then throws: an error result, and the run ends with agent_end", () => {
    const broken = defineTool({
      name: "broken",
      description: "broken",
      parameters: Type.Object({}),
      execute: () =>
        ({
          then() {
            throw new Error("then exploded");
          },
        }) as never,
    });
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "b", name: "broken", arguments: {} }] }, "done"]);
    const { events, errors } = collect(agentLoop([prompt], { messages: [], tools: [broken] }, { model }));
    expect(errors).toStrictEqual([]);
    expectOneResultPerToolCall(events);
    const result = (events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>).messages[2] as ToolResultMessage;
    expect(result).toMatchObject({ toolCallId: "b", isError: true, content: [text("then exploded")] });
  });
});

describe("hooks that answer nothing are named in the error", () => {
  it("transformContext returning undefined: \"transformContext failed\", not convertToLlm", () => {
    const model = scriptedModel(["never"]);
    const { events } = collect(agentLoop([prompt], { messages: [] }, { model, transformContext: () => undefined as never }));
    assertEventGrammar(events);
    const assistant = (events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>).messages[1] as AssistantMessage;
    expect(assistant.errorMessage).toBe("transformContext failed: it returned undefined, not an array of messages");
    expect(model.calls).toStrictEqual([]);
  });

  it("convertToLlm returning undefined: \"convertToLlm failed\", not the model", () => {
    const model = scriptedModel(["never"]);
    const { events } = collect(agentLoop([prompt], { messages: [] }, { model, convertToLlm: () => undefined as never }));
    assertEventGrammar(events);
    const assistant = (events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>).messages[1] as AssistantMessage;
    expect(assistant.errorMessage).toBe("convertToLlm failed: it returned undefined, not an array of messages");
    expect(model.calls).toStrictEqual([]);
  });
});
