import { emptyUsage } from "../../src/types/messages.js";
import { Type } from "@sinclair/typebox";
import { lastValueFrom, type Observable, of, toArray } from "rxjs";
import { describe, expect, expectTypeOf, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { finalAnswerReminder } from "../../src/streams/structured-output.js";
import { scriptedModel, type ScriptedReply } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentToolResult, ToolCall } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import {
  announce,
  expectOneResultPerToolCall,
  lettered,
  streamedReply,
  toolCall,
  toolResultMessage,
  userMessage,
} from "../testing/fixtures.js";

const Weather = Type.Object({ city: Type.String(), temperature: Type.Number() });
const prompt = userMessage("Weather in Paris?", 0);
const opening: AgentEvent[] = [{ type: "agent_start" }, { type: "turn_start" }, ...announce(prompt)];
const words = (...list: string[]) => ({ type: "text" as const, words: list });
const received: AgentToolResult = { content: [{ type: "text", text: "Final answer received." }], details: { city: "Paris", temperature: 21 }, terminate: true };

const callReply = (call: ToolCall): ScriptedReply => ({ content: [{ type: "toolCall", id: call.id, name: call.name, arguments: call.arguments }] });
const invalidText = [
  'Invalid arguments for tool "final_answer":',
  '  - /temperature: Expected number (received "warm")',
  'Received arguments: {"city":"Paris","temperature":"warm"}',
].join("\n");

/** The events of a turn whose reply is one final-answer call, answered by `result`. */
function answerTurn(call: ToolCall, result: ReturnType<typeof toolResultMessage>, executed: AgentToolResult | undefined) {
  const reply = streamedReply([{ type: "toolCall", call }]);
  const events: AgentEvent[] = [
    ...reply.events,
    { type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments },
    { type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: executed ?? { content: result.content, details: {} }, isError: result.isError },
    ...announce(result),
    { type: "turn_end", message: reply.message, toolResults: [result] },
  ];
  return { events, message: reply.message };
}

describe("agentLoop with output (a structured final answer)", () => {
  it(
    "gives the model a final_answer tool with the schema, ends on a valid call and puts its arguments in agent_end.output",
    marbles((m) => {
      const call = toolCall("a1", "final_answer", { city: "Paris", temperature: 21 });
      const model = scriptedModel([callReply(call)]);
      const result = toolResultMessage(call, "Final answer received.", { details: { city: "Paris", temperature: 21 } });
      const turn = answerTurn(call, result, received);
      const events: AgentEvent[] = [
        ...opening,
        ...turn.events,
        { type: "agent_end", messages: [prompt, turn.message, result], output: { city: "Paris", temperature: 21 }, reason: "terminated", usage: emptyUsage() },
      ];
      const run$: Observable<AgentEvent> = agentLoop([prompt], { messages: [] }, { model, output: Weather, scheduler: m.scheduler });
      m.expect(run$).toBeObservable(`(${Object.keys(lettered(events)).join("")}|)`, lettered(events));
      m.flush();
      expect(model.calls[0]!.tools!.map(({ name, description, parameters }) => ({ name, description, parameters }))).toStrictEqual([
        {
          name: "final_answer",
          description: "Gives your final answer. Call it once, when you are done, with the answer as its arguments; the conversation ends when they match the schema.",
          parameters: Weather,
        },
      ]);
    }),
  );

  it(
    "sends invalid arguments back as an error result, and the corrected call ends the run",
    marbles((m) => {
      const bad = toolCall("a1", "final_answer", { city: "Paris", temperature: "warm" });
      const good = toolCall("a2", "final_answer", { city: "Paris", temperature: 21 });
      const model = scriptedModel([callReply(bad), callReply(good)]);
      const badResult = toolResultMessage(bad, invalidText, { isError: true });
      const goodResult = toolResultMessage(good, "Final answer received.", { details: { city: "Paris", temperature: 21 } });
      const first = answerTurn(bad, badResult, undefined);
      const second = answerTurn(good, goodResult, received);
      const events: AgentEvent[] = [
        ...opening,
        ...first.events,
        { type: "turn_start" },
        ...second.events,
        { type: "agent_end", messages: [prompt, first.message, badResult, second.message, goodResult], output: { city: "Paris", temperature: 21 }, reason: "terminated", usage: emptyUsage() },
      ];
      const run$: Observable<AgentEvent> = agentLoop([prompt], { messages: [] }, { model, output: Weather, scheduler: m.scheduler });
      m.expect(run$).toBeObservable(`(${Object.keys(lettered(events)).join("")}|)`, lettered(events));
      m.flush();
      expect(model.calls[1]!.messages).toStrictEqual([prompt, first.message, badResult]);
    }),
  );

  it(
    "answers a reply in text with a reminder message, then takes the call that follows",
    marbles((m) => {
      const good = toolCall("a2", "final_answer", { city: "Paris", temperature: 21 });
      const model = scriptedModel(["It is 21 degrees", callReply(good)], { scheduler: m.scheduler, delay: 10 });
      const textReply = streamedReply([words("It ", "is ", "21 ", "degrees")]);
      const reminder = userMessage(finalAnswerReminder("final_answer"), 80);
      const goodResult = toolResultMessage(good, "Final answer received.", { details: { city: "Paris", temperature: 21 }, timestamp: 130 });
      const second = streamedReply([{ type: "toolCall", call: good }], { timestamp: 80 });
      const events: AgentEvent[] = [
        ...opening,
        ...textReply.events,
        { type: "turn_end", message: textReply.message, toolResults: [] },
        { type: "turn_start" },
        ...announce(reminder),
        ...second.events,
        { type: "tool_execution_start", toolCallId: "a2", toolName: "final_answer", args: good.arguments },
        { type: "tool_execution_end", toolCallId: "a2", toolName: "final_answer", result: received, isError: false },
        ...announce(goodResult),
        { type: "turn_end", message: second.message, toolResults: [goodResult] },
        { type: "agent_end", messages: [prompt, textReply.message, reminder, second.message, goodResult], output: { city: "Paris", temperature: 21 }, reason: "terminated", usage: emptyUsage() },
      ];
      const run$: Observable<AgentEvent> = agentLoop([prompt], { messages: [] }, { model, output: Weather, scheduler: m.scheduler });
      // The text reply streams an event every 10 frames up to its end at 80, where the reminder
      // opens the next turn; the call streams 10 apart again and the run ends at 130.
      m.expect(run$).toBeObservable(
        "(abcd) 4ms e 9ms f 9ms g 9ms h 9ms i 9ms j 9ms k 9ms (lmnop) 3ms q 9ms r 9ms s 9ms t 9ms (uvwxyzA|)",
        lettered(events),
      );
      m.flush();
      expect(model.calls[1]!.messages).toStrictEqual([prompt, textReply.message, reminder]);
    }),
  );

  it("ends with outputError once the misses exceed outputRetries, without calling the model again", async () => {
    const bad = toolCall("a2", "final_answer", { city: "Paris", temperature: "warm" });
    const model = scriptedModel(["It is warm", callReply(bad), "unused"]);
    const events = await lastValueFrom(agentLoop([prompt], { messages: [] }, { model, output: Weather, outputRetries: 1 }).pipe(toArray()));
    expectOneResultPerToolCall(events);
    const end = events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
    expect([end.output, end.outputError, end.reason, model.calls.length]).toStrictEqual([undefined, `No valid final answer after 2 attempts; the last: ${invalidText}`, "failed", 2]);
    expect(end.messages.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "user", "assistant", "toolResult"]);
  });

  it("with outputRetries 0 a reply in text ends the run at once, with no reminder", async () => {
    const model = scriptedModel(["It is warm"]);
    const events = await lastValueFrom(agentLoop([prompt], { messages: [] }, { model, output: Weather, outputRetries: 0 }).pipe(toArray()));
    const end = events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
    expect([end.messages.length, end.outputError]).toStrictEqual([2, "No valid final answer after 1 attempts; the last: the model replied in text without calling final_answer"]);
  });

  it("a final answer beside another tool call ends the run after that batch, every call answered", async () => {
    const lookup = defineTool({ name: "lookup", description: "Looks up", parameters: Type.Object({}), execute: () => textResult("looked up") });
    const answer = toolCall("a1", "final_answer", { city: "Paris", temperature: 21 });
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "l1", name: "lookup", arguments: {} }, callReply(answer).content![0]!] }, "unused"]);
    const events = await lastValueFrom(agentLoop([prompt], { messages: [], tools: [lookup] }, { model, output: Weather }).pipe(toArray()));
    expectOneResultPerToolCall(events);
    const end = events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
    expect([end.output, end.reason, model.calls.length, model.calls[0]!.tools!.map((tool) => tool.name)]).toStrictEqual([
      { city: "Paris", temperature: 21 },
      "terminated",
      1,
      ["lookup", "final_answer"],
    ]);
  });

  it("an aborted run ends with outputError; follow-ups still queued are reported; the caller's hook is still asked", async () => {
    const controller = new AbortController();
    controller.abort();
    const aborted = await lastValueFrom(agentLoop([prompt], { messages: [] }, { model: scriptedModel(["x"]), output: Weather, signal: controller.signal }).pipe(toArray()));
    const abortedEnd = aborted[aborted.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
    expect(abortedEnd.outputError).toBe("The run ended before a valid final answer.");

    const later = userMessage("and tomorrow?", 0);
    const asked: number[] = [];
    const lookup = defineTool({ name: "lookup", description: "Looks up", parameters: Type.Object({}), execute: () => textResult("looked up") });
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "l1", name: "lookup", arguments: {} }] }, callReply(toolCall("a1", "final_answer", { city: "Paris", temperature: 21 }))]);
    const events = await lastValueFrom(
      agentLoop([prompt], { messages: [], tools: [lookup] }, {
        model,
        output: Weather,
        followUp: of(later),
        shouldStopAfterTurn: ({ newMessages }) => {
          asked.push(newMessages.length);
          return false;
        },
      }).pipe(toArray()),
    );
    const end = events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
    expect([end.output, end.queued, asked]).toStrictEqual([{ city: "Paris", temperature: 21 }, { steering: [], followUp: [later] }, [3]]);
  });

  it("rejects at once a schema that is not an object, a tool with the final answer's name, negative retries", () => {
    const model = scriptedModel([]);
    const clash = defineTool({ name: "final_answer", description: "", parameters: Type.Object({}), execute: () => textResult("") });
    expect(() => agentLoop([prompt], { messages: [] }, { model, output: Type.Array(Type.String()) })).toThrow(
      new TypeError('output must be an object schema (tool arguments are JSON objects), not "array": wrap it, e.g. Type.Object({ answer: ... }).'),
    );
    expect(() => agentLoop([prompt], { messages: [], tools: [clash] }, { model, output: Weather })).toThrow(
      new TypeError('A tool is already named "final_answer"; with output, that name is the final answer\'s. Rename one (outputTool.name).'),
    );
    expect(() => agentLoop([prompt], { messages: [] }, { model, output: Weather, outputRetries: -1 })).toThrow(
      new TypeError("outputRetries must be a whole number of at least 0, not -1."),
    );
  });

  it("types agent_end.output from the schema, for agentLoop and Agent", async () => {
    const call = toolCall("a1", "final_answer", { city: "Paris", temperature: 21 });
    const run$ = agentLoop([prompt], { messages: [] }, { model: scriptedModel([callReply(call)]), output: Weather });
    expectTypeOf(run$).toEqualTypeOf<Observable<AgentEvent<unknown, { city: string; temperature: number }>>>();
    const agent = new Agent({ model: scriptedModel([callReply(call)]), output: Weather });
    const events = await lastValueFrom(agent.prompt("Weather in Paris?").pipe(toArray()));
    const end = events[events.length - 1];
    if (end?.type !== "agent_end") throw new Error("no agent_end");
    expectTypeOf(end.output).toEqualTypeOf<{ city: string; temperature: number } | undefined>();
    expect(end.output).toStrictEqual({ city: "Paris", temperature: 21 });
    expect(agent.messages.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "toolResult"]);
  });

  it("Agent.run() resolves with the messages and the typed output", async () => {
    const call = toolCall("a1", "final_answer", { city: "Paris", temperature: 21 });
    const agent = new Agent({ model: scriptedModel([callReply(call)]), output: Weather });
    const messages = await agent.run("Weather in Paris?");
    expectTypeOf(messages.output).toEqualTypeOf<{ city: string; temperature: number } | undefined>();
    expect(messages.output).toStrictEqual({ city: "Paris", temperature: 21 });
    expect(messages.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "toolResult"]);
    const plain = await new Agent({ model: scriptedModel(["No schema"]) }).run("Hi");
    expect([plain.output, plain.outputError, Object.keys(plain)]).toStrictEqual([undefined, undefined, ["0", "1"]]);
  });
});

