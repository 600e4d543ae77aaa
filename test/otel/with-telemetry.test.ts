import { trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { Type } from "@sinclair/typebox";
import { filter, lastValueFrom, take } from "rxjs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { withFallback } from "../../src/model/with-fallback.js";
import { withRetry } from "../../src/model/with-retry.js";
import { withTelemetry } from "../../src/otel/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import type { AgentTool } from "../../src/types.js";
import { emptyUsage } from "../../src/types/messages.js";
import { arbitraryModel, reply } from "../reliability/arbitrary-model.js";
import { idOf, named, parentOf, useTracing } from "./tracing.js";

const { exporter, tracer } = useTracing();

/** A tool that waits a promise tick, reads the active span and opens a span of its own. */
function lookupTool(name: string, seen: Record<string, string | undefined>): AgentTool {
  return {
    name,
    label: name,
    description: name,
    parameters: Type.Object({ city: Type.String() }),
    async execute(toolCallId: string) {
      await Promise.resolve();
      seen[toolCallId] = trace.getActiveSpan()?.spanContext().spanId;
      tracer.startActiveSpan(`http GET ${name}`, (span) => span.end());
      return { content: [{ type: "text" as const, text: `${name} done` }], details: undefined };
    },
  } as AgentTool;
}

describe("withTelemetry", () => {
  it("a run is one invoke_agent span with chat and execute_tool children; parallel calls are siblings; tools run in their span", async () => {
    const seen: Record<string, string | undefined> = {};
    const model = scriptedModel(
      [
        {
          content: [
            { type: "toolCall", id: "call_weather", name: "weather", arguments: { city: "Paris" } },
            { type: "toolCall", id: "call_time", name: "time", arguments: { city: "Paris" } },
          ],
          usage: { input: 10, output: 5, totalTokens: 15 },
        },
        { content: [{ type: "text", text: "Sunny, 10 am" }], usage: { input: 20, output: 7, totalTokens: 27 } },
      ],
      { id: "gpt-test", provider: "openai" },
    );
    const agent = new Agent(withTelemetry({ model, tools: [lookupTool("weather", seen), lookupTool("time", seen)] }, { tracer, conversationId: "session-1" }));
    await agent.run("Weather and time in Paris?");
    const spans = exporter.getFinishedSpans();

    const [run] = named(spans, "invoke_agent");
    expect(run).toBeDefined();
    expect(parentOf(run!)).toBeUndefined();
    const chats = named(spans, "chat gpt-test");
    const tools = [...named(spans, "execute_tool weather"), ...named(spans, "execute_tool time")];
    expect(chats.map(parentOf)).toStrictEqual([idOf(run!), idOf(run!)]);
    expect(tools.map(parentOf)).toStrictEqual([idOf(run!), idOf(run!)]);
    // Each tool saw its own span as the active one, and the span it opened nests under it.
    expect(seen).toStrictEqual({ call_weather: idOf(tools[0]!), call_time: idOf(tools[1]!) });
    expect(parentOf(named(spans, "http GET weather")[0]!)).toBe(idOf(tools[0]!));
    // Siblings that overlapped: both started before either ended.
    const [weather, time] = tools as [ReadableSpan, ReadableSpan];
    // Span times are [seconds, nanoseconds] pairs: compared as pairs of numbers, not as strings.
    const at = ([seconds, nanoseconds]: readonly [number, number]) => BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds);
    expect(at(weather.startTime) <= at(time.endTime) && at(time.startTime) <= at(weather.endTime)).toBe(true);

    expect(chats[0]!.attributes).toStrictEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-test",
      "gen_ai.conversation.id": "session-1",
      "gen_ai.response.model": "gpt-test",
      "gen_ai.response.finish_reasons": ["toolUse"],
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 5,
    });
    expect(weather.attributes).toStrictEqual({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather", "gen_ai.tool.call.id": "call_weather", "gen_ai.conversation.id": "session-1" });
    expect(run!.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": "session-1",
      "gen_ai.usage.input_tokens": 30,
      "gen_ai.usage.output_tokens": 12,
      "rxagent.end_reason": "idle",
      "rxagent.turns": 2,
    });
    expect(run!.status.code).toBe(0);
  });

  it("a failed model call marks its chat span and the run span ERROR with error.type; content is off by default", async () => {
    const model = scriptedModel([{ stopReason: "error", errorMessage: "401 Incorrect API key provided: sk-abcdefghijklmnop" }], { id: "m" });
    await lastValueFrom(agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, withTelemetry({ model }, { tracer })));
    const spans = exporter.getFinishedSpans();
    const [chat] = named(spans, "chat m");
    const [run] = named(spans, "invoke_agent");
    expect(chat!.attributes["error.type"]).toBe("model_error");
    expect(chat!.status).toStrictEqual({ code: 2, message: "401 Incorrect API key provided: [redacted]" });
    expect(run!.attributes).toMatchObject({ "error.type": "failed", "rxagent.end_reason": "failed" });
    expect(Object.keys(chat!.attributes).filter((key) => key.includes("messages"))).toStrictEqual([]);
  });

  // The wrapper reads each event before the loop checks it: a throw there came out of the model's
  // `next`, which rxjs rethrows on a timer, an uncaught exception that ended the process.
  it.each([
    ["no message in a done", [{ type: "done", reason: "stop", message: null }], "model_error", "The model's final message is null."],
    ["no message in an error", [{ type: "error", reason: "error", error: 5 }], "model_error", undefined],
    ["events that are no objects, then no usage", [undefined, null, 7, { type: "done", reason: "stop", message: { role: "assistant", content: [], stopReason: "stop" } }], undefined, undefined],
    [
      "an error whose failure's status is an object that cannot be made text",
      [{ type: "error", reason: "error", error: { role: "assistant", content: [], stopReason: "error", errorMessage: "overloaded" }, failure: { status: { toString: 1 } } }],
      "model_error",
      "overloaded",
    ],
  ])("a model that sends %s ends its chat span and the run", async (_case, events, errorType, statusMessage) => {
    const model = { ...arbitraryModel([{ events, end: "complete" }]), id: "m" };
    const ended = await lastValueFrom(agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, withTelemetry({ model }, { tracer })));
    expect(ended.type).toBe("agent_end");
    const [chat] = named(exporter.getFinishedSpans(), "chat m");
    expect(chat!.attributes["error.type"]).toBe(errorType);
    expect(chat!.status.message).toBe(statusMessage);
  });

  // Found the status above, and in withRetry a `null` event and an error message that is no text
  // thrown out of the model's `next`: the arbitrary model's events now carry a `failure` of any shape too.
  it("ends every run whatever the models send, its spans ended, through retries, a fallback and content recorded (property-based)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(reply, { minLength: 1, maxLength: 3 }), fc.array(reply, { maxLength: 2 }), async (replies, fallbackReplies) => {
        exporter.reset();
        const primary = withRetry({ ...arbitraryModel(replies), id: "m" }, { retries: 1, initialDelayMs: 0, maxRetryAfterMs: 5 });
        const model = withFallback([primary, { ...arbitraryModel(fallbackReplies), id: "fallback" }]);
        const ended = await lastValueFrom(agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, withTelemetry({ model, maxTurns: 4 }, { tracer, recordContent: true })));
        expect(ended.type).toBe("agent_end");
        expect(named(exporter.getFinishedSpans(), "invoke_agent")).toHaveLength(1);
      }),
      { numRuns: 150 },
    );
  });

  it("recordContent notes content it cannot record (nested past the stack) and the run goes on", async () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level++) deep = [deep];
    const message = { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "weather", arguments: { deep } }], stopReason: "toolUse", usage: emptyUsage() };
    const model = { ...arbitraryModel([{ events: [{ type: "done", reason: "toolUse", message }], end: "complete" }]), id: "m" };
    const ended = await lastValueFrom(agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, withTelemetry({ model }, { tracer, recordContent: true })));
    expect(ended.type).toBe("agent_end");
    const [chat] = named(exporter.getFinishedSpans(), "chat m");
    expect(chat!.attributes["gen_ai.output.messages"]).toBe("[not recorded: Maximum call stack size exceeded]");
  });

  it("recordContent puts messages, arguments and results on the spans, credentials blanked", async () => {
    const seen: Record<string, string | undefined> = {};
    const model = scriptedModel(
      [{ content: [{ type: "toolCall", id: "call_1", name: "weather", arguments: { city: "sk-abcdefghijklmnop" } }] }, "Done"],
      { id: "m" },
    );
    const agent = new Agent(withTelemetry({ model, systemPrompt: "Be brief", tools: [lookupTool("weather", seen)] }, { tracer, recordContent: true }));
    await agent.run("Use key sk-abcdefghijklmnop");
    const spans = exporter.getFinishedSpans();
    const [firstChat] = named(spans, "chat m");
    expect(JSON.parse(firstChat!.attributes["gen_ai.input.messages"] as string)).toStrictEqual([{ role: "user", content: "Use key [redacted]", timestamp: expect.any(Number) }]);
    expect(firstChat!.attributes["gen_ai.system_instructions"]).toBe('"Be brief"');
    const [tool] = named(spans, "execute_tool weather");
    expect(tool!.attributes["gen_ai.tool.call.arguments"]).toBe('{"city":"[redacted]"}');
    expect(tool!.attributes["gen_ai.tool.call.result"]).toBe('[{"type":"text","text":"weather done"}]');
  });

  it("an abort sets ERROR with error.type aborted on the run, and an unsubscribe leaves nothing open", async () => {
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "call_slow", name: "slow", arguments: {} }] }, "never"], { id: "m" });
    let started = (): void => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = {
      name: "slow",
      label: "slow",
      description: "slow",
      parameters: Type.Object({}),
      execute: (_id: string, _args: unknown, { signal }: { signal: AbortSignal }) =>
        new Promise((resolve) => {
          started();
          signal.addEventListener("abort", () => resolve({ content: [{ type: "text", text: "stopped" }] }));
        }),
    } as unknown as AgentTool;

    const agent = new Agent(withTelemetry({ model, tools: [slow] }, { tracer }));
    const ended = agent.run("go");
    await running;
    agent.abort();
    await ended;
    const [run] = named(exporter.getFinishedSpans(), "invoke_agent");
    expect(run!.attributes).toMatchObject({ "error.type": "aborted", "rxagent.end_reason": "aborted" });

    exporter.reset();
    const events = agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [slow] }, withTelemetry({ model: scriptedModel([{ content: [{ type: "toolCall", id: "call_2", name: "slow", arguments: {} }] }], { id: "m" }) }, { tracer }));
    const second = new Promise<void>((resolve) => (started = resolve));
    const subscription = events.subscribe();
    await second;
    subscription.unsubscribe();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.attributes["error.type"]])).toStrictEqual([
      ["chat m", undefined],
      ["execute_tool slow", "cancelled"],
      ["invoke_agent", "cancelled"],
    ]);
  });

  it("approvals and slot waits are events on the tool's span; a queued message an event on the run's", async () => {
    const seen: Record<string, string | undefined> = {};
    const model = scriptedModel(
      [
        {
          content: [
            { type: "toolCall", id: "call_a", name: "weather", arguments: { city: "Oslo" } },
            { type: "toolCall", id: "call_b", name: "weather", arguments: { city: "Rome" } },
          ],
        },
        "Done",
        "Noted",
      ],
      { id: "m" },
    );
    const gated = { ...lookupTool("weather", seen), needsApproval: true } as AgentTool;
    const agent = new Agent(withTelemetry({ model, tools: [gated], maxConcurrency: 1 }, { tracer }));
    agent.events$.subscribe((event) => {
      if (event.type === "tool_approval_start") agent.approve(event.toolCallId);
      if (event.type === "turn_end" && event.toolResults.length > 0) agent.followUp("and Paris?");
    });
    await agent.run("Weather in Oslo and Rome?");
    const spans = exporter.getFinishedSpans();
    const eventsOf = (span: ReadableSpan) => span.events.map((event) => event.name);
    const [first, second] = named(spans, "execute_tool weather") as [ReadableSpan, ReadableSpan];
    expect(eventsOf(first)).toStrictEqual(["rxagent.tool_approval_start", "rxagent.tool_approval_end"]);
    expect(eventsOf(second)).toStrictEqual(["rxagent.tool_approval_start", "rxagent.tool_approval_end", "rxagent.tool_slot_wait_start", "rxagent.tool_slot_wait_end"]);
    expect(first.events[1]?.attributes).toStrictEqual({ "rxagent.approved": true });
    const [run] = named(spans, "invoke_agent");
    expect(eventsOf(run!)).toStrictEqual(["rxagent.follow_up"]);
  });

  it("tools of the loop's context run in their span, and so do tools and models swapped in later", async () => {
    const seen: Record<string, string | undefined> = {};
    const activeInModel: Record<string, string | undefined> = {};
    const reading = (id: string, reply: Exclude<ScriptedTurn, (...args: never[]) => unknown>): ScriptedTurn => () => {
      activeInModel[id] = trace.getActiveSpan()?.spanContext().spanId;
      return reply;
    };
    const first = scriptedModel([reading("first", { content: [{ type: "toolCall", id: "call_context", name: "weather", arguments: { city: "Oslo" } }] })], { id: "first-model" });
    const second = scriptedModel(
      [reading("second", { content: [{ type: "toolCall", id: "call_swapped", name: "time", arguments: { city: "Oslo" } }] }), reading("third", "Done")],
      { id: "second-model", provider: "other" },
    );
    const config = withTelemetry(
      {
        model: first,
        // The second turn on: another model, and the tools replaced.
        prepareNextTurn: ({ context: runContext }) => ({ model: second, context: { ...runContext, tools: [lookupTool("time", seen)] } }),
      },
      { tracer },
    );
    await lastValueFrom(agentLoop([{ role: "user", content: "Weather in Oslo?", timestamp: 0 }], { messages: [], tools: [lookupTool("weather", seen)] }, config));
    const spans = exporter.getFinishedSpans();
    const [run] = named(spans, "invoke_agent");
    const [weather] = named(spans, "execute_tool weather");
    const [time] = named(spans, "execute_tool time");
    // The swapped-in model's calls are traced under its own name, each active while it streams.
    const chats = spans.filter((span) => span.name.startsWith("chat "));
    expect(chats.map((span) => [span.name, span.attributes["gen_ai.provider.name"], parentOf(span)])).toStrictEqual([
      ["chat first-model", "scripted", idOf(run!)],
      ["chat second-model", "other", idOf(run!)],
      ["chat second-model", "other", idOf(run!)],
    ]);
    expect(activeInModel).toStrictEqual({ first: idOf(chats[0]!), second: idOf(chats[1]!), third: idOf(chats[2]!) });
    expect(seen).toStrictEqual({ call_context: idOf(weather!), call_swapped: idOf(time!) });
    expect(parentOf(named(spans, "http GET weather")[0]!)).toBe(idOf(weather!));
    expect(parentOf(named(spans, "http GET time")[0]!)).toBe(idOf(time!));
  });

  it("an Agent's model and tools changed by configure are traced too", async () => {
    const seen: Record<string, string | undefined> = {};
    const agent = new Agent(withTelemetry({ model: scriptedModel(["unused"], { id: "old" }) }, { tracer }));
    agent.configure({
      model: scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "weather", arguments: { city: "Rome" } }] }, "Done"], { id: "new" }),
      tools: [lookupTool("weather", seen)],
    });
    await agent.run("Weather in Rome?");
    const spans = exporter.getFinishedSpans();
    expect(named(spans, "chat new").length).toBe(2);
    expect(seen).toStrictEqual({ call_1: idOf(named(spans, "execute_tool weather")[0]!) });
  });

  it("a fallback shows on the chat span as the model that answered", async () => {
    const down = scriptedModel([{ stopReason: "error", errorMessage: "503 overloaded" }], { id: "primary", provider: "a" });
    const up = scriptedModel(["Hello"], { id: "backup", provider: "b" });
    const events = agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, withTelemetry({ model: withFallback([down, up]) }, { tracer }));
    await lastValueFrom(events.pipe(filter((event) => event.type === "agent_end"), take(1)));
    const [chat] = named(exporter.getFinishedSpans(), "chat primary");
    expect(chat!.attributes).toMatchObject({ "gen_ai.request.model": "primary", "gen_ai.response.model": "backup" });
  });
});
