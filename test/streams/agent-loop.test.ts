import { emptyUsage } from "../../src/types/messages.js";
import { Type } from "@sinclair/typebox";
import { lastValueFrom, map, type Observable, of, tap, throwError, timer, toArray, VirtualTimeScheduler } from "rxjs";
import { describe, expect, it } from "vitest";
import { InvalidStateError } from "../../src/errors.js";
import { agentLoop, agentLoopContinue } from "../../src/streams/agent-loop.js";
import { MessageQueue } from "../../src/streams/message-queue.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentMessage, LlmContext, Model, ModelEvent } from "../../src/types.js";
import { collect } from "../helpers/collect.js";
import { marbles } from "../helpers/marbles.js";
import { timeline } from "../helpers/timeline.js";
import {
  announce,
  assistantMessage,
  expectOneResultPerToolCall,
  streamedReply,
  text,
  toolCall,
  toolResultMessage,
  userMessage,
} from "../testing/fixtures.js";

declare module "../../src/types/messages.js" {
  interface CustomAgentMessages {
    notice: { role: "notice"; text: string; timestamp: number };
  }
}

const prompt = userMessage("Hello", 0);
const opening: AgentEvent[] = [{ type: "agent_start" }, { type: "turn_start" }, ...announce(prompt)];
const words = (...list: string[]) => ({ type: "text" as const, words: list });

/** `events` one every `step` frames from `start`: a model that streams with a delay. */
function eachAt<T>(start: number, step: number, events: readonly T[]): Record<number, T[]> {
  return Object.fromEntries(events.map((event, index) => [start + index * step, [event]]));
}

/** A reply's streamed events but its message_end, one every 10 frames from frame 10, as `scriptedModel` with delay 10 sends them. */
const streamedEvery10 = (reply: { events: AgentEvent[] }) => eachAt(10, 10, reply.events.slice(0, -1));
const messageEndOf = (reply: { events: AgentEvent[] }) => reply.events[reply.events.length - 1]!;

function agentEndOf(events: AgentEvent[]): Extract<AgentEvent, { type: "agent_end" }> {
  const last = events[events.length - 1];
  if (last?.type !== "agent_end") throw new Error(`last event is ${last?.type}`);
  return last;
}

describe("agentLoop", () => {
  it(
    "streams a plain prompt as agent_start, turn_start, the prompt, the assistant message, turn_end, agent_end",
    marbles((m) => {
      const model = scriptedModel(["Hi there"], { scheduler: m.scheduler, delay: 10 });
      const p0 = assistantMessage([]);
      const p1 = assistantMessage([text("")]);
      const p2 = assistantMessage([text("Hi ")]);
      const p3 = assistantMessage([text("Hi there")]);
      const context = { systemPrompt: "Be brief.", messages: [] };
      m.expect(agentLoop([prompt], context, { model, scheduler: m.scheduler })).toBeObservable(
        ...timeline<AgentEvent>({
          0: [{ type: "agent_start" }, { type: "turn_start" }, { type: "message_start", message: prompt }, { type: "message_end", message: prompt }],
          10: [{ type: "message_start", message: p0 }],
          20: [{ type: "message_update", message: p1, assistantMessageEvent: { type: "text_start", contentIndex: 0, partial: p1 } }],
          30: [{ type: "message_update", message: p2, assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "Hi ", partial: p2 } }],
          40: [{ type: "message_update", message: p3, assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "there", partial: p3 } }],
          50: [{ type: "message_update", message: p3, assistantMessageEvent: { type: "text_end", contentIndex: 0, content: "Hi there", partial: p3 } }],
          60: [
            { type: "message_end", message: p3 },
            { type: "turn_end", message: p3, toolResults: [] },
            { type: "agent_end", messages: [prompt, p3], reason: "idle", usage: emptyUsage() },
          ],
        }),
      );
      m.flush();
      expect(model.calls).toStrictEqual([{ systemPrompt: "Be brief.", messages: [prompt] }]);
      expect(context.messages).toStrictEqual([]);
    }),
  );

  it(
    "runs turns while there are tool results, with timestamps from the scheduler",
    marbles((m) => {
      const wait = defineTool({
        name: "wait",
        description: "Waits 20 frames",
        parameters: Type.Object({}),
        execute: () => timer(20, m.scheduler).pipe(map(() => textResult("waited"))),
      });
      const model = scriptedModel([{ content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] }, "Done"], {
        scheduler: m.scheduler,
      });
      const call = toolCall("w1", "wait");
      const first = streamedReply([{ type: "toolCall", call }]);
      const second = streamedReply([words("Done")], { timestamp: 20 });
      const result = toolResultMessage(call, "waited", { timestamp: 20 });
      const executed = textResult("waited");
      const recorded: AgentEvent[] = [];
      const run$ = agentLoop([prompt], { messages: [], tools: [wait] }, { model, scheduler: m.scheduler }).pipe(
        tap((event) => recorded.push(event)),
      );
      // The model answers at once; the tool waits 20 frames.
      m.expect(run$).toBeObservable(
        ...timeline<AgentEvent>({
          0: [...opening, ...first.events, { type: "tool_execution_start", toolCallId: "w1", toolName: "wait", args: {} }],
          20: [
            { type: "tool_execution_end", toolCallId: "w1", toolName: "wait", result: executed, isError: false },
            ...announce(result),
            { type: "turn_end", message: first.message, toolResults: [result] },
            { type: "turn_start" },
            ...second.events,
            { type: "turn_end", message: second.message, toolResults: [] },
            { type: "agent_end", messages: [prompt, first.message, result, second.message], reason: "idle", usage: emptyUsage() },
          ],
        }),
      );
      m.flush();
      expect(model.calls.map((call) => call.messages)).toStrictEqual([[prompt], [prompt, first.message, result]]);
      expectOneResultPerToolCall(recorded);
    }),
  );

  it(
    "injects steering pushed during a turn at the start of the next turn",
    marbles((m) => {
      const model = scriptedModel(["Hi", "Ok"], { scheduler: m.scheduler, delay: 10 });
      const steer = userMessage("Also this", 25);
      const steering = m.hot<AgentMessage>("25ms s", { s: steer });
      const first = streamedReply([words("Hi")]);
      const second = streamedReply([words("Ok")], { timestamp: 50 });
      m.expect(agentLoop([prompt], { messages: [] }, { model, steering, scheduler: m.scheduler })).toBeObservable(
        ...timeline<AgentEvent>({
          0: opening,
          ...streamedEvery10(first),
          50: [messageEndOf(first), { type: "turn_end", message: first.message, toolResults: [] }, { type: "turn_start" }, ...announce(steer)],
          ...eachAt(60, 10, second.events.slice(0, -1)),
          100: [
            messageEndOf(second),
            { type: "turn_end", message: second.message, toolResults: [] },
            { type: "agent_end", messages: [prompt, first.message, steer, second.message], reason: "idle", usage: emptyUsage() },
          ],
        }),
      );
      m.expect(steering).toHaveSubscriptions("^ 99ms !");
      m.flush();
      expect(model.calls[1]!.messages).toStrictEqual([prompt, first.message, steer]);
    }),
  );

  const steeredBeforeStart = (label: string, steeringOf: (steer: AgentMessage) => Observable<AgentMessage> | MessageQueue) =>
    it(
      `puts steering queued before the first call into the first turn (${label})`,
      marbles((m) => {
        const steer = userMessage("Before you start", 0);
        const steering = steeringOf(steer);
        const model = scriptedModel(["Hi"], { scheduler: m.scheduler, delay: 10 });
        const reply = streamedReply([words("Hi")]);
        m.expect(agentLoop([prompt], { messages: [] }, { model, steering, scheduler: m.scheduler })).toBeObservable(
          ...timeline<AgentEvent>({
            0: [...opening, ...announce(steer)],
            ...streamedEvery10(reply),
            50: [
              messageEndOf(reply),
              { type: "turn_end", message: reply.message, toolResults: [] },
              { type: "agent_end", messages: [prompt, steer, reply.message], reason: "idle", usage: emptyUsage() },
            ],
          }),
        );
        m.flush();
        expect(model.calls[0]!.messages).toStrictEqual([prompt, steer]);
        if (steering instanceof MessageQueue) expect(steering.size).toBe(0);
      }),
    );
  steeredBeforeStart("a synchronous Observable", (steer) => of(steer));
  steeredBeforeStart("a MessageQueue", (steer) => {
    const queue = new MessageQueue();
    queue.push(steer);
    return queue;
  });

  it(
    "starts another inner loop for a follow-up once the agent would stop",
    marbles((m) => {
      const model = scriptedModel(["Hi", "Ok"], { scheduler: m.scheduler, delay: 10 });
      const follow = userMessage("And then?", 5);
      const followUp = m.hot<AgentMessage>("5ms f", { f: follow });
      const first = streamedReply([words("Hi")]);
      const second = streamedReply([words("Ok")], { timestamp: 50 });
      m.expect(agentLoop([prompt], { messages: [] }, { model, followUp, scheduler: m.scheduler })).toBeObservable(
        ...timeline<AgentEvent>({
          0: opening,
          ...streamedEvery10(first),
          50: [messageEndOf(first), { type: "turn_end", message: first.message, toolResults: [] }, { type: "turn_start" }, ...announce(follow)],
          ...eachAt(60, 10, second.events.slice(0, -1)),
          100: [
            messageEndOf(second),
            { type: "turn_end", message: second.message, toolResults: [] },
            { type: "agent_end", messages: [prompt, first.message, follow, second.message], reason: "idle", usage: emptyUsage() },
          ],
        }),
      );
      m.flush();
      expect(model.calls[1]!.messages).toStrictEqual([prompt, first.message, follow]);
    }),
  );

  describe("drain modes", () => {
    const s1 = userMessage("s1");
    const s2 = userMessage("s2");
    const filled = (...messages: AgentMessage[]) => {
      const queue = new MessageQueue();
      for (const message of messages) queue.push(message);
      return queue;
    };
    const runOf = (config: Parameters<typeof agentLoop>[2]) => {
      const events = collect(agentLoop([prompt], { messages: [] }, config));
      assertEventGrammar(events);
      return agentEndOf(events).messages;
    };

    it("steering one-at-a-time injects one message per turn", () => {
      const model = scriptedModel(["A", "B"]);
      const messages = runOf({ model, steering: filled(s1, s2) });
      expect(model.calls.map((call) => call.messages.length)).toStrictEqual([2, 4]);
      expect(messages.map((message) => message.role)).toStrictEqual(["user", "user", "assistant", "user", "assistant"]);
      expect(messages[1]).toBe(s1);
      expect(messages[3]).toBe(s2);
    });

    it("steering all injects everything queued at once", () => {
      const model = scriptedModel(["A"]);
      const messages = runOf({ model, steering: filled(s1, s2), steeringMode: "all" });
      expect(model.calls.map((call) => call.messages)).toStrictEqual([[prompt, s1, s2]]);
      expect(messages.map((message) => message.role)).toStrictEqual(["user", "user", "user", "assistant"]);
    });

    it("follow-up one-at-a-time starts one inner loop per message", () => {
      const model = scriptedModel(["A", "B", "C"]);
      runOf({ model, followUp: filled(s1, s2) });
      expect(model.calls.map((call) => call.messages.at(-1))).toStrictEqual([prompt, s1, s2]);
    });

    it("follow-up all takes every queued message into one inner loop", () => {
      const model = scriptedModel(["A", "B"]);
      const messages = runOf({ model, followUp: filled(s1, s2), followUpMode: "all" });
      expect(model.calls.map((call) => call.messages.length)).toStrictEqual([1, 4]);
      expect(messages.slice(2, 4)).toStrictEqual([s1, s2]);
    });
  });

  it(
    "reports steering and follow-ups still queued at the end in agent_end.queued",
    marbles((m) => {
      const model = scriptedModel(["Hi", "never"], { scheduler: m.scheduler, delay: 10 });
      const steer = userMessage("steer", 15);
      const follow = userMessage("follow", 35);
      const reply = streamedReply([words("Hi")]);
      m.expect(
        agentLoop([prompt], { messages: [] }, {
          model,
          maxTurns: 1,
          steering: m.hot("15ms s", { s: steer }),
          followUp: m.hot("35ms f", { f: follow }),
          scheduler: m.scheduler,
        }),
      ).toBeObservable(
        ...timeline<AgentEvent>({
          0: opening,
          ...streamedEvery10(reply),
          50: [
            messageEndOf(reply),
            { type: "turn_end", message: reply.message, toolResults: [] },
            { type: "agent_end", messages: [prompt, reply.message], queued: { steering: [steer], followUp: [follow] }, reason: "max_turns", usage: emptyUsage() },
          ],
        }),
      );
    }),
  );

  it("reports only the queues the loop made: a caller's own queue stays the caller's", () => {
    const follow = userMessage("mine");
    const followUp = new MessageQueue();
    followUp.push(follow);
    const steer = userMessage("steer");
    const model = scriptedModel([{ content: [{ type: "text", text: "x" }], stopReason: "error" }]);
    const events = collect(agentLoop([prompt], { messages: [] }, { model, followUp, steering: of(userMessage("first"), steer) }));
    expect(agentEndOf(events).queued).toStrictEqual({ steering: [steer], followUp: [] });
    expect(followUp.peek()).toStrictEqual([follow]);
  });

  it("calls transformContext on the transcript, then convertToLlm on its result", () => {
    const old = userMessage("old");
    const oldAnswer = assistantMessage([text("old answer")]);
    const seen: { transform?: AgentMessage[]; convert?: AgentMessage[]; signal?: AbortSignal } = {};
    const model = scriptedModel(["Hi"]);
    const events = collect(
      agentLoop([prompt], { systemPrompt: "sys", messages: [old, oldAnswer] }, {
        model,
        transformContext: (messages, signal) => {
          seen.transform = messages;
          seen.signal = signal;
          return messages.slice(-1);
        },
        convertToLlm: (messages) => {
          seen.convert = messages;
          return messages.map((message) => (message.role === "user" ? { ...message, content: `[${String(message.content)}]` } : message)) as never;
        },
      }),
    );
    expect(seen.transform).toStrictEqual([old, oldAnswer, prompt]);
    expect(seen.convert).toStrictEqual([prompt]);
    expect(seen.signal).toBeInstanceOf(AbortSignal);
    expect(model.calls).toStrictEqual([{ systemPrompt: "sys", messages: [{ ...prompt, content: "[Hello]" }] }]);
    expect(agentEndOf(events).messages).toStrictEqual([prompt, streamedReply([words("Hi")]).message]);
  });

  it("keeps custom messages in the transcript but out of the model's context by default", () => {
    const notice: AgentMessage = { role: "notice", text: "Build passed", timestamp: 0 };
    const steeredNotice: AgentMessage = { role: "notice", text: "Deploy started", timestamp: 0 };
    const model = scriptedModel(["Hi"]);
    const events = collect(agentLoop([prompt], { messages: [notice] }, { model, steering: of(steeredNotice) }));
    assertEventGrammar(events);
    expect(model.calls[0]!.messages).toStrictEqual([prompt]);
    expect(agentEndOf(events).messages.map((message) => message.role)).toStrictEqual(["user", "notice", "assistant"]);
  });

  it("hands the model the transcript without copying it each turn: one array, up to date at every call", () => {
    const scripted = scriptedModel([{ content: [{ type: "toolCall", id: "t1", name: "echo", arguments: {} }] }, "Done"]);
    const seen: { messages: LlmContext["messages"]; length: number }[] = [];
    const model: Model = {
      ...scripted,
      stream: (context, options) => {
        seen.push({ messages: context.messages, length: context.messages.length });
        return scripted.stream(context, options);
      },
    };
    const echo = defineTool({ name: "echo", description: "e", parameters: Type.Object({}), execute: () => textResult("ok") });
    const events = collect(agentLoop([prompt], { messages: [], tools: [echo] }, { model }));
    assertEventGrammar(events);
    expect(seen.map((call) => call.length)).toStrictEqual([1, 3]);
    // Why the same array: a copy per turn costs time in proportion to the transcript (bench W4).
    expect(seen[1]!.messages).toBe(seen[0]!.messages);
    expect(scripted.calls.map((call) => call.messages.length)).toStrictEqual([1, 3]);
  });

  describe("failed model calls", () => {
    for (const stopReason of ["error", "aborted"] as const) {
      it(`ends the run after turn_end when the model stops with "${stopReason}", without running tools`, () => {
        const model = scriptedModel([
          { content: [{ type: "text", text: "Part" }, { type: "toolCall", id: "t1", name: "missing", arguments: {} }], stopReason, errorMessage: "rate limited" },
          "never",
        ]);
        const follow = userMessage("later");
        const events = collect(agentLoop([prompt], { messages: [] }, { model, followUp: of(follow) }));
        const failed = { ...streamedReply([words("Part"), { type: "toolCall", call: toolCall("t1", "missing") }], { stopReason }).message, errorMessage: "rate limited" };
        expect(events).toStrictEqual([
          ...opening,
          ...streamedReply([words("Part"), { type: "toolCall", call: toolCall("t1", "missing") }], { stopReason }).events.slice(0, -1),
          { type: "message_end", message: failed },
          { type: "turn_end", message: failed, toolResults: [] },
          { type: "agent_end", messages: [prompt, failed], queued: { steering: [], followUp: [follow] }, reason: stopReason === "error" ? "failed" : "aborted", usage: emptyUsage() },
        ]);
        expect(model.calls).toHaveLength(1);
        expectOneResultPerToolCall(events);
      });
    }

    it("turns a model Observable error into an error message with what was streamed so far", () => {
      const model = scriptedModel([{ content: [{ type: "text", text: "Hi" }], failure: { kind: "observable-error", error: new Error("socket closed") } }]);
      const events = collect(agentLoop([prompt], { messages: [] }, { model }));
      const streamed = streamedReply([words("Hi")]);
      const failed = { ...streamed.message, stopReason: "error" as const, errorMessage: "Model stream failed: socket closed" };
      expect(events).toStrictEqual([
        ...opening,
        ...streamed.events.slice(0, -1),
        { type: "message_end", message: failed },
        { type: "turn_end", message: failed, toolResults: [] },
        { type: "agent_end", messages: [prompt, failed], reason: "failed", usage: emptyUsage() },
      ]);
    });

    it("turns a model Observable that completes without done into an error message", () => {
      const model = scriptedModel([{ content: [{ type: "text", text: "Hi" }], failure: { kind: "complete-early" } }]);
      const events = collect(agentLoop([prompt], { messages: [] }, { model }));
      const streamed = streamedReply([words("Hi")]);
      const failed = { ...streamed.message, stopReason: "error" as const, errorMessage: "Model stream completed without a done or error event" };
      expect(events).toStrictEqual([
        ...opening,
        ...streamed.events.slice(0, -1),
        { type: "message_end", message: failed },
        { type: "turn_end", message: failed, toolResults: [] },
        { type: "agent_end", messages: [prompt, failed], reason: "failed", usage: emptyUsage() },
      ]);
    });

    it(
      "turns a throwing convertToLlm into an error message stamped with the scheduler's time",
      marbles((m) => {
        const model = scriptedModel(["Hi"], { scheduler: m.scheduler, delay: 10 });
        const reply = streamedReply([words("Hi")]);
        const steer = userMessage("again", 0);
        let calls = 0;
        const failed = assistantMessage([], { stopReason: "error", timestamp: 50, errorMessage: "convertToLlm failed: too long" });
        m.expect(
          agentLoop([prompt], { messages: [] }, {
            model,
            steering: m.hot("15ms s", { s: steer }),
            convertToLlm: (messages) => {
              if (++calls > 1) throw new Error("too long");
              return messages as never;
            },
            scheduler: m.scheduler,
          }),
        ).toBeObservable(
          ...timeline<AgentEvent>({
            0: opening,
            ...streamedEvery10(reply),
            // The second turn fails at once, at the frame the first ends.
            50: [
              messageEndOf(reply),
              { type: "turn_end", message: reply.message, toolResults: [] },
              { type: "turn_start" },
              ...announce(steer),
              ...announce(failed),
              { type: "turn_end", message: failed, toolResults: [] },
              { type: "agent_end", messages: [prompt, reply.message, steer, failed], reason: "failed", usage: emptyUsage() },
            ],
          }),
        );
      }),
    );
  });

  describe("stopping", () => {
    const echo = defineTool({ name: "echo", description: "Echoes", parameters: Type.Object({}), execute: () => textResult("echo") });
    const callsEcho = { content: [{ type: "toolCall" as const, name: "echo", arguments: {} }] };
    // Its clock stays at 0, so every result is stamped 0.
    const scheduler = new VirtualTimeScheduler();
    /** Turn `n` (from 1) calling echo, up to its turn_end; the first turn opens with the run's opening. */
    const echoTurn = (n: number) => {
      const call = toolCall(`call_${n}_1`, "echo");
      const reply = streamedReply([{ type: "toolCall", call }]);
      const result = toolResultMessage(call, "echo");
      const events: AgentEvent[] = [
        ...(n === 1 ? opening : [{ type: "turn_start" } as const]),
        ...reply.events,
        { type: "tool_execution_start", toolCallId: call.id, toolName: "echo", args: {} },
        { type: "tool_execution_end", toolCallId: call.id, toolName: "echo", result: textResult("echo"), isError: false },
        ...announce(result),
        { type: "turn_end", message: reply.message, toolResults: [result] },
      ];
      return { events, messages: [reply.message, result] };
    };
    const [turn1, turn2] = [echoTurn(1), echoTurn(2)];

    it("ends after the turn where shouldStopAfterTurn says so, even with tool results", () => {
      const model = scriptedModel([callsEcho, callsEcho, "never"]);
      const asked: number[] = [];
      const events = collect(
        agentLoop([prompt], { messages: [], tools: [echo] }, {
          model,
          scheduler,
          shouldStopAfterTurn: ({ newMessages, toolResults, message }) => {
            asked.push(newMessages.length);
            expect(toolResults.map((result) => result.toolCallId)).toStrictEqual([`call_${asked.length}_1`]);
            expect(message.stopReason).toBe("toolUse");
            return newMessages.length >= 5;
          },
        }),
      );
      expect(asked).toStrictEqual([3, 5]);
      expect(model.calls).toHaveLength(2);
      expect(events).toStrictEqual([
        ...turn1.events,
        ...turn2.events,
        { type: "agent_end", messages: [prompt, ...turn1.messages, ...turn2.messages], reason: "stopped_by_hook", usage: emptyUsage() },
      ]);
      expectOneResultPerToolCall(events);
    });

    it("ends the run as failed when shouldStopAfterTurn throws, saying so in agent_end", () => {
      const model = scriptedModel([callsEcho, callsEcho]);
      const events = collect(agentLoop([prompt], { messages: [], tools: [echo] }, { model, scheduler, shouldStopAfterTurn: () => { throw new Error("no"); } }));
      expect(model.calls).toHaveLength(1);
      expect(events).toStrictEqual([
        ...turn1.events,
        { type: "agent_end", messages: [prompt, ...turn1.messages], reason: "failed", errorMessage: "shouldStopAfterTurn failed: no", usage: emptyUsage() },
      ]);
      expectOneResultPerToolCall(events);
    });

    it("ends after maxTurns turns", () => {
      const model = scriptedModel([callsEcho, callsEcho, callsEcho, "never"]);
      const events = collect(agentLoop([prompt], { messages: [], tools: [echo] }, { model, scheduler, maxTurns: 2 }));
      expect(model.calls).toHaveLength(2);
      expect(events).toStrictEqual([
        ...turn1.events,
        ...turn2.events,
        { type: "agent_end", messages: [prompt, ...turn1.messages, ...turn2.messages], reason: "max_turns", usage: emptyUsage() },
      ]);
      expectOneResultPerToolCall(events);
    });

    it(
      "waits for an Observable-returning shouldStopAfterTurn in virtual time",
      marbles((m) => {
        const model = scriptedModel(["A", "B"], { scheduler: m.scheduler });
        const follow = userMessage("next");
        const first = streamedReply([words("A")]);
        const second = streamedReply([words("B")], { timestamp: 20 });
        let asked = 0;
        m.expect(
          agentLoop([prompt], { messages: [] }, {
            model,
            followUp: of(follow),
            shouldStopAfterTurn: () => timer(20, m.scheduler).pipe(map(() => ++asked > 1)),
            scheduler: m.scheduler,
          }),
        ).toBeObservable(
          // The model answers at once; each turn waits 20 frames for the hook.
          ...timeline<AgentEvent>({
            0: [...opening, ...first.events, { type: "turn_end", message: first.message, toolResults: [] }],
            20: [{ type: "turn_start" }, ...announce(follow), ...second.events, { type: "turn_end", message: second.message, toolResults: [] }],
            40: [{ type: "agent_end", messages: [prompt, first.message, follow, second.message], reason: "stopped_by_hook", usage: emptyUsage() }],
          }),
        );
      }),
    );
  });

  describe("abort and unsubscribe", () => {
    /** A model whose stream is a cold marble Observable, recording the signal each call got. */
    function coldModel(stream: Observable<ModelEvent>) {
      const signals: AbortSignal[] = [];
      const model: Model = {
        id: "scripted",
        provider: "scripted",
        api: "scripted",
        stream: (_context: LlmContext, { signal }) => {
          signals.push(signal);
          return stream;
        },
      };
      return { model, signals };
    }
    const p0 = assistantMessage([]);
    const p1 = assistantMessage([text("")]);
    const p2 = assistantMessage([text("Hi")]);
    const modelEvents: Record<string, ModelEvent> = {
      s: { type: "start", partial: p0 },
      t: { type: "text_start", contentIndex: 0, partial: p1 },
      d: { type: "text_delta", contentIndex: 0, delta: "Hi", partial: p2 },
      x: { type: "done", reason: "stop", message: p2 },
    };
    /** What the cold stream below has produced by frame 20. */
    const streamedSoFar: Record<number, AgentEvent[]> = {
      0: opening,
      10: [{ type: "message_start", message: p0 }],
      20: [{ type: "message_update", message: p1, assistantMessageEvent: modelEvents.t! }],
    };

    it(
      "ends with an aborted message, turn_end and agent_end at the frame the signal aborts, and cancels the model call",
      marbles((m) => {
        const stream = m.cold<ModelEvent>("10ms s 9ms t 9ms d 9ms (x|)", modelEvents);
        const { model, signals } = coldModel(stream);
        const controller = new AbortController();
        m.scheduler.schedule(() => controller.abort(), 25);
        const aborted = { ...p1, stopReason: "aborted" as const, errorMessage: "Request was aborted" };
        m.expect(agentLoop([prompt], { messages: [] }, { model, signal: controller.signal, scheduler: m.scheduler })).toBeObservable(
          ...timeline<AgentEvent>({
            ...streamedSoFar,
            25: [
              { type: "message_end", message: aborted },
              { type: "turn_end", message: aborted, toolResults: [] },
              { type: "agent_end", messages: [prompt, aborted], reason: "aborted", usage: emptyUsage() },
            ],
          }),
        );
        m.expect(stream).toHaveSubscriptions("^ 24ms !");
        m.flush();
        expect(signals).toHaveLength(1);
        expect(signals[0]!.aborted).toBe(true);
      }),
    );

    it(
      "hands the model call's signal to a provider that spreads its options",
      marbles((m) => {
        const stream = m.cold<ModelEvent>("10ms s 9ms t 9ms d 9ms (x|)", modelEvents);
        const spread: Array<Record<string, unknown>> = [];
        const model: Model = {
          id: "scripted",
          provider: "scripted",
          api: "scripted",
          stream: (_context: LlmContext, options) => {
            spread.push({ ...options });
            return stream;
          },
        };
        const controller = new AbortController();
        m.scheduler.schedule(() => controller.abort(), 25);
        agentLoop([prompt], { messages: [] }, { model, signal: controller.signal, scheduler: m.scheduler }).subscribe();
        m.flush();
        expect(spread.map((options) => [Object.keys(options), options.signal instanceof AbortSignal, (options.signal as AbortSignal).aborted])).toStrictEqual([
          [["signal"], true, true],
        ]);
      }),
    );

    it(
      "ends at once, without calling the model, when the signal aborted before the run",
      marbles((m) => {
        const stream = m.cold<ModelEvent>("10ms s 9ms t 9ms d 9ms (x|)", modelEvents);
        const { model, signals } = coldModel(stream);
        const controller = new AbortController();
        controller.abort();
        const aborted = assistantMessage([], { stopReason: "aborted", errorMessage: "Request was aborted" });
        m.expect(agentLoop([prompt], { messages: [] }, { model, signal: controller.signal, scheduler: m.scheduler })).toBeObservable(
          ...timeline<AgentEvent>({
            0: [
              ...opening,
              ...announce(aborted),
              { type: "turn_end", message: aborted, toolResults: [] },
              { type: "agent_end", messages: [prompt, aborted], reason: "aborted", usage: emptyUsage() },
            ],
          }),
        );
        m.expect(stream).toHaveSubscriptions([]);
        m.flush();
        expect(signals).toHaveLength(0);
      }),
    );

    it(
      "tears the model call down at the frame the subscriber leaves, and emits nothing more",
      marbles((m) => {
        const stream = m.cold<ModelEvent>("10ms s 9ms t 9ms d 9ms (x|)", modelEvents);
        const { model, signals } = coldModel(stream);
        const steering = m.hot<AgentMessage>("50ms s", { s: userMessage("late") });
        m.expect(agentLoop([prompt], { messages: [] }, { model, steering, scheduler: m.scheduler }), "^ 24ms !").toBeObservable(
          ...timeline(streamedSoFar, "open"),
        );
        m.expect(stream).toHaveSubscriptions("^ 24ms !");
        m.expect(steering).toHaveSubscriptions("^ 24ms !");
        m.flush();
        expect(signals[0]!.aborted).toBe(true);
      }),
    );
  });

  describe("agentLoopContinue", () => {
    it("throws an InvalidStateError at once for an empty transcript", () => {
      const model = scriptedModel(["Hi"]);
      expect(() => agentLoopContinue({ messages: [] }, { model })).toThrow(InvalidStateError);
      expect(() => agentLoopContinue({ messages: [] }, { model })).toThrow("Cannot continue: no messages in context");
      expect(model.calls).toHaveLength(0);
    });

    it("throws an InvalidStateError at once when the transcript ends with an assistant message", () => {
      const model = scriptedModel(["Hi"]);
      const context = { messages: [prompt, assistantMessage([text("Hi")])] };
      expect(() => agentLoopContinue(context, { model })).toThrow(InvalidStateError);
      expect(() => agentLoopContinue(context, { model })).toThrow("Cannot continue from message role: assistant");
    });

    it("continues from a transcript ending with a user message, without announcing it again", () => {
      const model = scriptedModel(["Hi"]);
      const reply = streamedReply([words("Hi")]);
      const events = collect(agentLoopContinue({ messages: [prompt] }, { model }));
      expect(events).toStrictEqual([
        { type: "agent_start" },
        { type: "turn_start" },
        ...reply.events,
        { type: "turn_end", message: reply.message, toolResults: [] },
        { type: "agent_end", messages: [reply.message], reason: "idle", usage: emptyUsage() },
      ]);
      expect(model.calls[0]!.messages).toStrictEqual([prompt]);
    });
  });

  it("waits for Promise-returning hooks (real async)", async () => {
    const model = scriptedModel(["Hi"]);
    const reply = streamedReply([words("Hi")]);
    const order: string[] = [];
    const events = await lastValueFrom(
      agentLoop([prompt], { messages: [] }, {
        model,
        transformContext: async (messages) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          order.push("transformContext");
          return messages;
        },
        convertToLlm: async (messages) => {
          await Promise.resolve();
          order.push("convertToLlm");
          return messages.filter((message) => message.role === "user") as never;
        },
        shouldStopAfterTurn: async () => {
          order.push("shouldStopAfterTurn");
          return false;
        },
      }).pipe(toArray()),
    );
    expect(order).toStrictEqual(["transformContext", "convertToLlm", "shouldStopAfterTurn"]);
    expect(events).toStrictEqual([
      ...opening,
      ...reply.events,
      { type: "turn_end", message: reply.message, toolResults: [] },
      { type: "agent_end", messages: [prompt, reply.message], reason: "idle", usage: emptyUsage() },
    ]);
  });

  it("turns a rejecting transformContext into an error message (real async)", async () => {
    const model = scriptedModel(["Hi"]);
    const events = await lastValueFrom(
      agentLoop([prompt], { messages: [] }, { model, transformContext: () => Promise.reject(new Error("store down")) }).pipe(toArray()),
    );
    const end = agentEndOf(events);
    expect(end.messages[1]).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "transformContext failed: store down" });
    expect(model.calls).toHaveLength(0);
    assertEventGrammar(events);
  });

  it("drops a steering Observable that errors and goes on", () => {
    const model = scriptedModel(["Hi"]);
    const events = collect(agentLoop([prompt], { messages: [] }, { model, steering: throwError(() => new Error("socket")) }));
    const reply = streamedReply([words("Hi")]);
    expect(events).toStrictEqual([
      ...opening,
      ...reply.events,
      { type: "turn_end", message: reply.message, toolResults: [] },
      { type: "agent_end", messages: [prompt, reply.message], reason: "idle", usage: emptyUsage() },
    ]);
  });

  it("runs turn after turn of a synchronous model and an instant tool at a constant stack depth", () => {
    // The point of the old 3000-turn run (no stack growth from turn to turn), measured directly:
    // the depth of the stack at each turn's start and in each tool call must not grow by a single
    // frame, so 50 turns show what thousands would (a frame per turn overflows after ~10k turns).
    const turns = 50;
    const toolDepths: number[] = [];
    const turnDepths: number[] = [];
    const stackDepth = () => new Error().stack?.split("\n").length ?? 0;
    const tick = defineTool({
      name: "tick",
      description: "Ticks",
      parameters: Type.Object({}),
      execute: () => {
        toolDepths.push(stackDepth());
        return textResult("ok");
      },
    });
    const model = scriptedModel(
      Array.from({ length: turns }, (_, index) =>
        index === turns - 1 ? "done" : { content: [{ type: "toolCall" as const, name: "tick", arguments: {} }] },
      ),
    );
    const traceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = Infinity;
    let events: AgentEvent[];
    try {
      events = collect(
        agentLoop([prompt], { messages: [], tools: [tick] }, { model }).pipe(
          tap((event) => {
            if (event.type === "turn_start") turnDepths.push(stackDepth());
          }),
        ),
      );
    } finally {
      Error.stackTraceLimit = traceLimit;
    }
    expect(model.calls).toHaveLength(turns);
    expect(toolDepths).toStrictEqual(Array.from({ length: turns - 1 }, () => toolDepths[0]));
    expect(turnDepths.slice(1)).toStrictEqual(Array.from({ length: turns - 1 }, () => turnDepths[1]));
    expect(events.filter((event) => event.type === "turn_end")).toHaveLength(turns);
    expect(agentEndOf(events).messages).toHaveLength(1 + turns + (turns - 1));
    expectOneResultPerToolCall(events);
  });
});
