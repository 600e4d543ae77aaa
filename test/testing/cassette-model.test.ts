import { Type } from "@sinclair/typebox";
import { asyncScheduler, tap, VirtualTimeScheduler } from "rxjs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cassetteModel, recordingModel, scriptedModel, type Cassette, type ScriptedTurn } from "../../src/testing/index.js";
import type { LlmContext, ModelEvent } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import { assistantMessage, text, userMessage } from "./fixtures.js";

const live = () => ({ signal: new AbortController().signal });
const context: LlmContext = { systemPrompt: "Be brief.", messages: [userMessage("What is 12*7?")] };

/** Records `turns` as a scripted model plays them on a virtual clock, `delay` apart. */
function recordScripted(turns: ScriptedTurn[], contexts: LlmContext[], delay = 10): { cassette: Cassette; events: ModelEvent[][] } {
  const scheduler = new VirtualTimeScheduler();
  const recorder = recordingModel(scriptedModel(turns, { scheduler, delay }), { scheduler });
  const events = contexts.map((callContext) => {
    const seen: ModelEvent[] = [];
    recorder.stream(callContext, live()).subscribe((event) => seen.push(event));
    scheduler.flush();
    return seen;
  });
  return { cassette: recorder.cassette, events };
}

/** A cassette of one call whose events are a start, a text delta and done, at the given times. */
function handWritten(times: [number, number, number]): Cassette {
  return {
    version: 1,
    model: { id: "scripted", provider: "scripted", api: "scripted" },
    calls: [
      {
        request: { systemPrompt: "Be brief.", messages: [{ role: "user", content: "What is 12*7?" }] },
        events: [
          { at: times[0], event: { type: "start" }, changes: { set: { role: "assistant", api: "scripted", provider: "scripted", model: "scripted", usage: assistantMessage([]).usage, stopReason: "stop", timestamp: 0 }, content: { length: 0 } } },
          { at: times[1], event: { type: "text_start", contentIndex: 0 }, changes: { content: { length: 1, blocks: { 0: { set: { type: "text", text: "" } } } } } },
          { at: times[2], event: { type: "done", reason: "stop" }, changes: { content: { length: 1, blocks: { 0: { set: { text: "84" } } } } } },
        ],
      },
    ],
  };
}

const start = { type: "start", partial: assistantMessage([]) } as const;
const textStart = { type: "text_start", contentIndex: 0, partial: assistantMessage([text("")]) } as const;
const done = { type: "done", reason: "stop", message: assistantMessage([text("84")]) } as const;

describe("cassetteModel", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it(
    "plays each event at its recorded time after the call starts",
    marbles((m) => {
      const model = cassetteModel(handWritten([0, 10, 25]), { scheduler: m.scheduler });
      m.expect(model.stream(context, live())).toBeObservable("a 9ms b 14ms (c|)", { a: start, b: textStart, c: done });
    }),
  );

  it(
    "divides the delays by speed (rounded to whole milliseconds), and plays everything at once at Infinity",
    marbles((m) => {
      const twice = cassetteModel(handWritten([0, 10, 25]), { scheduler: m.scheduler, speed: 2 });
      const instant = cassetteModel(handWritten([0, 10, 25]), { scheduler: m.scheduler, speed: Infinity });
      const values = { a: start, b: textStart, c: done };
      m.expect(twice.stream(context, live())).toBeObservable("a 4ms b 7ms (c|)", values);
      m.expect(instant.stream(context, live())).toBeObservable("(abc|)", values);
      expect(() => cassetteModel(handWritten([0, 10, 25]), { speed: 0 })).toThrow("cassetteModel: speed must be above 0, not 0.");
    }),
  );

  it(
    "replays a recorded run exactly: the same events at the same times, call after call",
    marbles((m) => {
      const turns: ScriptedTurn[] = [
        { content: [{ type: "thinking", thinking: "Multiply." }, { type: "toolCall", name: "calculator", arguments: { expression: "12*7" } }], usage: { input: 5, output: 7 } },
        "12*7 is 84.",
      ];
      const second: LlmContext = { ...context, messages: [...context.messages, userMessage("And 12*8?")] };
      const recorded = recordScripted(turns, [context, second]);
      const replay = cassetteModel(recorded.cassette, { scheduler: m.scheduler });
      const expectCall = (callContext: LlmContext, events: ModelEvent[]) => {
        // The scripted model emits one event every 10 ms, the last one completing the stream.
        const marble = events.map((_event, index) => (index === events.length - 1 ? `(${index}|)` : `${index}`)).join(" 9ms ");
        const values = Object.fromEntries(events.map((event, index) => [String(index), event]));
        m.expect(replay.stream(callContext, live())).toBeObservable(`10ms ${marble}`, values);
      };
      expectCall(context, recorded.events[0]!);
      expectCall(second, recorded.events[1]!);
      m.flush();
      expect(replay.calls).toBe(2);
      expect(recorded.cassette.calls.map((call) => call.events.map((event) => event.at))).toStrictEqual(
        recorded.events.map((events) => events.map((_event, index) => 10 * (index + 1))),
      );
    }),
  );

  it(
    "ends a call whose request differs from the recording as an error message listing the differences",
    marbles((m) => {
      const tools = [{ name: "calculator", description: "Arithmetic", parameters: Type.Object({ expression: Type.String() }) }];
      const { cassette } = recordScripted(["84"], [{ ...context, tools }]);
      const model = cassetteModel(cassette, { scheduler: m.scheduler });
      const changed: LlmContext = { systemPrompt: "Be brief.", messages: [userMessage("What is 12*8?")], tools: [] };
      const errorMessage = [
        "cassetteModel: call #1 differs from the recording:",
        '- messages[0].content: recorded "What is 12*7?", sent "What is 12*8?"',
        '- tools: "calculator" recorded, not sent',
      ].join("\n");
      m.expect(model.stream(changed, live())).toBeObservable("(ae|)", {
        a: { type: "start", partial: assistantMessage([]) },
        e: { type: "error", reason: "error", error: assistantMessage([], { stopReason: "error", errorMessage }) },
      });
    }),
  );

  it(
    "answers a call past the end of the cassette with an error message saying so",
    marbles((m) => {
      const model = cassetteModel(handWritten([0, 1, 2]), { scheduler: m.scheduler, speed: Infinity });
      model.stream(context, live()).subscribe();
      m.flush();
      const errorMessage = "cassetteModel: the cassette has 1 calls; there is no call #2 to replay.";
      m.expect(model.stream(context, live())).toBeObservable("(ae|)", {
        a: { type: "start", partial: assistantMessage([], { timestamp: 0 }) },
        e: { type: "error", reason: "error", error: assistantMessage([], { stopReason: "error", errorMessage }) },
      });
    }),
  );

  it(
    "replays a recording cut short, then ends the call as an error message",
    marbles((m) => {
      const cut = handWritten([0, 10, 25]);
      cut.calls[0]!.events.pop();
      const model = cassetteModel(cut, { scheduler: m.scheduler });
      const errorMessage = "cassetteModel: the recording of call #1 ends here (it was cut short).";
      m.expect(model.stream(context, live())).toBeObservable("a 9ms (be|)", {
        a: start,
        b: textStart,
        e: { type: "error", reason: "error", error: assistantMessage([text("")], { stopReason: "error", errorMessage }) },
      });
    }),
  );

  it(
    "ends with an aborted message when the signal fires, at that virtual time",
    marbles((m) => {
      const model = cassetteModel(handWritten([0, 10, 25]), { scheduler: m.scheduler });
      const controller = new AbortController();
      m.scheduler.schedule(() => controller.abort(), 15);
      m.expect(model.stream(context, { signal: controller.signal })).toBeObservable("a 9ms b 4ms (x|)", {
        a: start,
        b: textStart,
        x: { type: "error", reason: "aborted", error: assistantMessage([text("")], { stopReason: "aborted", errorMessage: "Request was aborted" }) },
      });
    }),
  );

  it(
    "emits no more recorded events once the consumer aborts on one, even those due in the same frame",
    marbles((m) => {
      const model = cassetteModel(handWritten([0, 10, 10]), { scheduler: m.scheduler });
      const controller = new AbortController();
      const stream = model.stream(context, { signal: controller.signal }).pipe(tap((event) => event.type === "text_start" && controller.abort()));
      m.expect(stream).toBeObservable("a 9ms (bx|)", {
        a: start,
        b: textStart,
        x: { type: "error", reason: "aborted", error: assistantMessage([text("")], { stopReason: "aborted", errorMessage: "Request was aborted" }) },
      });
    }),
  );

  it(
    "replays a call the recording run aborted with its aborted ending, at the recorded time",
    marbles((m) => {
      const scheduler = new VirtualTimeScheduler();
      const recorder = recordingModel(scriptedModel(["84"], { scheduler, delay: 10 }), { scheduler });
      const controller = new AbortController();
      scheduler.schedule(() => controller.abort(), 15);
      recorder.stream(context, { signal: controller.signal }).subscribe();
      scheduler.flush();
      const model = cassetteModel(recorder.cassette, { scheduler: m.scheduler });
      m.expect(model.stream(context, live())).toBeObservable("10ms a 9ms (x|)", {
        a: start,
        x: { type: "error", reason: "aborted", error: assistantMessage([], { stopReason: "aborted", errorMessage: "Request was aborted" }) },
      });
    }),
  );

  it(
    "emits nothing after unsubscribe",
    marbles((m) => {
      const model = cassetteModel(handWritten([0, 10, 25]), { scheduler: m.scheduler });
      m.expect(model.stream(context, live()), "^ 12ms !").toBeObservable("a 9ms b", { a: start, b: textStart });
    }),
  );

  it("stops its timer and forgets the signal when unsubscribed", () => {
    vi.useFakeTimers();
    const model = cassetteModel(handWritten([0, 10, 25]), { scheduler: asyncScheduler });
    const controller = new AbortController();
    const removeListener = vi.spyOn(controller.signal, "removeEventListener");
    const seen: string[] = [];
    const subscription = model.stream(context, { signal: controller.signal }).subscribe((event) => seen.push(event.type));
    vi.advanceTimersByTime(12);
    expect(vi.getTimerCount()).toBe(1);
    subscription.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
    expect(removeListener).toHaveBeenCalledWith("abort", expect.any(Function));
    vi.advanceTimersByTime(100);
    expect(seen).toStrictEqual(["start", "text_start"]);
  });
});
