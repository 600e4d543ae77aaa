import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { LlmContext, ModelEvent } from "../../src/types.js";
import { contentLength, isPendingSnapshot } from "../../src/util/shared-content.js";
import { marbles } from "../helpers/marbles.js";
import { assistantMessage, text, toolCall, userMessage } from "./fixtures.js";

const context: LlmContext = { messages: [userMessage("Hi")] };
const live = () => ({ signal: new AbortController().signal });
const eventsOf = (model: ReturnType<typeof scriptedModel>) => {
  const events: ModelEvent[] = [];
  model.stream(context, live()).subscribe((event) => events.push(event));
  return events;
};

describe("scriptedModel", () => {
  it(
    "plays a reply in virtual time, one event per delay, and completes with done",
    marbles((m) => {
      const model = scriptedModel(["Hi there"], { scheduler: m.scheduler, delay: 10 });
      const p0 = assistantMessage([]);
      const p1 = assistantMessage([text("")]);
      const p2 = assistantMessage([text("Hi ")]);
      const p3 = assistantMessage([text("Hi there")]);
      m.expect(model.stream(context, live())).toBeObservable("10ms a 9ms b 9ms c 9ms d 9ms e 9ms (f|)", {
        a: { type: "start", partial: p0 },
        b: { type: "text_start", contentIndex: 0, partial: p1 },
        c: { type: "text_delta", contentIndex: 0, delta: "Hi ", partial: p2 },
        d: { type: "text_delta", contentIndex: 0, delta: "there", partial: p3 },
        e: { type: "text_end", contentIndex: 0, content: "Hi there", partial: p3 },
        f: { type: "done", reason: "stop", message: p3 },
      });
      m.flush();
      expect(model.calls).toStrictEqual([context]);
      expect(model.calls[0]!.messages).not.toBe(context.messages);
    }),
  );

  it(
    "ends with an aborted error event at the next tick after its signal fires",
    marbles((m) => {
      const model = scriptedModel(["Hi there"], { scheduler: m.scheduler, delay: 10 });
      const controller = new AbortController();
      m.scheduler.schedule(() => controller.abort(), 15);
      const p0 = assistantMessage([]);
      m.expect(model.stream(context, { signal: controller.signal })).toBeObservable("10ms a 9ms (c|)", {
        a: { type: "start", partial: p0 },
        c: { type: "error", reason: "aborted", error: { ...p0, stopReason: "aborted", errorMessage: "Request was aborted" } },
      });
    }),
  );

  it(
    "replaces the final event with an Observable error or an early completion when scripted to fail",
    marbles((m) => {
      const failure = new Error("socket closed");
      const model = scriptedModel(
        [
          { content: [{ type: "text", text: "Hi" }], failure: { kind: "observable-error", error: failure } },
          { content: [{ type: "text", text: "Hi" }], failure: { kind: "complete-early" } },
        ],
        { scheduler: m.scheduler, delay: 1 },
      );
      const p1 = assistantMessage([text("")]);
      const p2 = assistantMessage([text("Hi")]);
      const values = {
        a: { type: "start", partial: assistantMessage([]) },
        b: { type: "text_start", contentIndex: 0, partial: p1 },
        c: { type: "text_delta", contentIndex: 0, delta: "Hi", partial: p2 },
        d: { type: "text_end", contentIndex: 0, content: "Hi", partial: p2 },
      } satisfies Record<string, ModelEvent>;
      m.expect(model.stream(context, live())).toBeObservable("-abcd#", values, failure);
      m.expect(model.stream(context, live())).toBeObservable("-abcd|", values);
    }),
  );

  it("streams tool calls with default ids call_<call>_<block>, thinking, and usage totals", () => {
    const model = scriptedModel([
      {
        content: [
          { type: "thinking", thinking: "Let me see" },
          { type: "toolCall", name: "add", arguments: { a: 1 } },
          { type: "toolCall", id: "mine", name: "add", arguments: { a: 2 } },
        ],
        usage: { input: 3, output: 4 },
      },
    ]);
    const events = eventsOf(model);
    expect(events.map((event) => event.type)).toStrictEqual([
      "start",
      "thinking_start", "thinking_delta", "thinking_delta", "thinking_delta", "thinking_end",
      "toolcall_start", "toolcall_delta", "toolcall_end",
      "toolcall_start", "toolcall_delta", "toolcall_end",
      "done",
    ]);
    const done = events.at(-1) as Extract<ModelEvent, { type: "done" }>;
    expect(done.reason).toBe("toolUse");
    expect(done.message.content).toStrictEqual([{ type: "thinking", thinking: "Let me see" }, toolCall("call_1_2", "add", { a: 1 }), toolCall("mine", "add", { a: 2 })]);
    expect(done.message.usage).toMatchObject({ input: 3, output: 4, totalTokens: 7 });
    expect(events[7]).toMatchObject({ type: "toolcall_delta", delta: '{"a":1}' });
  });

  it("cuts text into chunkSize deltas", () => {
    const events = eventsOf(scriptedModel(["abcde"], { chunkSize: 2 }));
    expect(events.filter((event) => event.type === "text_delta").map((event) => (event as { delta: string }).delta)).toStrictEqual(["ab", "cd", "e"]);
  });

  it("calls function turns with the context and call index", () => {
    const seen: number[] = [];
    const model = scriptedModel([(ctx, index) => { seen.push(index); return `echo ${String(ctx.messages[0]!.content)}`; }]);
    const done = eventsOf(model).at(-1) as Extract<ModelEvent, { type: "done" }>;
    expect(done.message.content).toStrictEqual([text("echo Hi")]);
    expect(seen).toStrictEqual([0]);
  });

  it("answers a scripted error with an error event, and a call past the script with an error saying so", () => {
    const model = scriptedModel([{ content: [{ type: "text", text: "Par" }], stopReason: "error", errorMessage: "rate limited" }]);
    expect(eventsOf(model).at(-1)).toStrictEqual({
      type: "error",
      reason: "error",
      error: assistantMessage([text("Par")], { stopReason: "error", errorMessage: "rate limited" }),
    });
    expect(eventsOf(model)).toStrictEqual([
      { type: "start", partial: assistantMessage([], { stopReason: "error" }) },
      { type: "error", reason: "error", error: assistantMessage([], { stopReason: "error", errorMessage: "scriptedModel: no reply scripted for call #2" }) },
    ]);
  });

  it("without a scheduler, a delay runs on asyncScheduler", async () => {
    const events = await lastValueFrom(scriptedModel(["Hi there"], { delay: 1 }).stream(context, live()).pipe(toArray()));
    expect(events.map((event) => event.type)).toStrictEqual(["start", "text_start", "text_delta", "text_delta", "text_end", "done"]);
  });

  it("shares the blocks of a long reply between its partials: 1,000 tool calls copy no block past the 128th", () => {
    const calls = Array.from({ length: 1_000 }, (_unused, index) => ({ type: "toolCall" as const, id: `c${index}`, name: "f", arguments: { n: index } }));
    const events = eventsOf(scriptedModel([{ content: [{ type: "text", text: "Doing it" }, ...calls] }]));
    const partials = new Set(events.flatMap((event) => ("partial" in event ? [event.partial] : [])));
    // Blocks copied into content arrays made for the partials (a long one's array is built when read).
    const copied = [...partials].reduce((total, partial) => total + (isPendingSnapshot(partial) ? 0 : contentLength(partial)), 0);

    // Why: each partial had its own copy of the content: 1,003,003 block copies here, n² for n
    // calls (8,000 calls: GC 67% of the run). Now a partial of fewer than 128 blocks is copied.
    // The text block: 3 partials of 1 block; a call: 2 partials (start, end).
    expect(copied).toBe(3 + 2 * ((127 * 128) / 2 - 1));
    // Read after the whole reply was made: each partial kept the blocks it saw.
    const toolEvents = events.filter((event) => event.type === "toolcall_start" || event.type === "toolcall_end");
    const expected = (index: number, ended: boolean) => [{ type: "text", text: "Doing it" }, ...calls.slice(0, index), { ...(calls[index] as object), ...(ended ? {} : { arguments: {} }) }];
    for (const call of [0, 126, 127, 500, 999]) {
      expect(toolEvents[2 * call]?.partial.content).toStrictEqual(expected(call, false));
      expect(toolEvents[2 * call + 1]?.partial.content).toStrictEqual(expected(call, true));
    }
    const done = events.at(-1);
    expect(done?.type === "done" && !isPendingSnapshot(done.message) && done.message.content).toStrictEqual([{ type: "text", text: "Doing it" }, ...calls]);
  });
});
