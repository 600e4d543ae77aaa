import { Type } from "@sinclair/typebox";
import { lastValueFrom, NEVER, of, startWith } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { withFallback } from "../../src/model/with-fallback.js";
import { withTelemetry } from "../../src/otel/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentTool, Model, ModelEvent, Usage } from "../../src/types.js";
import { emptyUsage } from "../../src/types/messages.js";
import { modelEvents } from "../helpers/model-events.js";
import { eventsOf, named, useTracing } from "./tracing.js";

const { exporter, tracer } = useTracing();

/** A tool whose call runs until `release` is called (it ignores its signal, so a cancel settles it). */
function heldTool(name: string) {
  let release = (): void => {};
  let started = (): void => {};
  const running = new Promise<void>((resolve) => (started = resolve));
  const tool = {
    name,
    label: name,
    description: name,
    parameters: Type.Object({}),
    execute: () =>
      new Promise((resolve) => {
        release = () => resolve({ content: [{ type: "text", text: `${name} done` }] });
        started();
      }),
  } as unknown as AgentTool;
  return { tool, running, release: () => release() };
}

const callOf = (id: string, name: string) => ({ content: [{ type: "toolCall" as const, id, name, arguments: {} }] });
const prompt = [{ role: "user" as const, content: "hi", timestamp: 0 }];
const usage = (input: number, cacheRead: number, cacheWrite: number, cost: number): Usage => ({ ...emptyUsage(), input, output: 2, cacheRead, cacheWrite, totalTokens: input + 2 + cacheRead + cacheWrite, cost: { ...emptyUsage().cost, total: cost } });
/** A model that answers "Hi" with `spent` as its usage. */
function answering(spent: Usage, id = "m"): Model {
  const { start, message } = modelEvents(id);
  const done: ModelEvent = { type: "done", reason: "stop", message: { ...message([{ type: "text", text: "Hi" }]), usage: spent } };
  return { id, provider: "test", api: "test", stream: () => of(start, done) };
}
/** A model whose calls fail before content with `event`. */
const failing = (id: string, event: ModelEvent): Model => ({ id, provider: "test", api: "test", stream: () => of(modelEvents(id).start, event) });

describe("withTelemetry: span events and attributes", () => {
  it("a cancelled tool call is an event on its span with error.type cancelled; a failed one is tool_error", async () => {
    const slow = heldTool("slow");
    const broken = { ...heldTool("broken").tool, execute: () => Promise.reject(new Error("disk full")) } as AgentTool;
    const model = scriptedModel([{ content: [...callOf("call_slow", "slow").content, ...callOf("call_broken", "broken").content] }, "Done"], { id: "m" });
    const agent = new Agent(withTelemetry({ model, tools: [slow.tool, broken] }, { tracer }));
    const ended = agent.run("go");
    await slow.running;
    agent.cancelToolCall("call_slow", "too slow");
    await ended;
    const spans = exporter.getFinishedSpans();
    const [cancelled] = named(spans, "execute_tool slow");
    const [failed] = named(spans, "execute_tool broken");
    expect(eventsOf(cancelled)).toStrictEqual([["rxagent.tool_cancelled", { "rxagent.reason": "too slow" }]]);
    expect(cancelled!.attributes["error.type"]).toBe("cancelled");
    expect(eventsOf(failed)).toStrictEqual([]);
    expect(failed!.attributes["error.type"]).toBe("tool_error");
  });

  it("steering and follow-up messages are events on the run's span, each named for its queue, also steering after a turn without tool calls", async () => {
    const slow = heldTool("slow");
    const agent = new Agent(withTelemetry({ model: scriptedModel([callOf("call_1", "slow"), "Done", "Noted", "Bye"], { id: "m" }), tools: [slow.tool] }, { tracer }));
    const ended = agent.run("go");
    await slow.running;
    agent.steer("and be quick");
    agent.steer("and brief");
    agent.followUp("then say bye");
    slow.release();
    await ended;
    const [run] = named(exporter.getFinishedSpans(), "invoke_agent");
    // Turn 3's steering follows turn 2's text reply: from the events alone it looks like a follow-up.
    expect(eventsOf(run)).toStrictEqual([
      ["rxagent.steering", { "rxagent.turn": 2 }],
      ["rxagent.steering", { "rxagent.turn": 3 }],
      ["rxagent.follow_up", { "rxagent.turn": 4 }],
    ]);
  });

  it("the run's span carries its summed tokens, cache tokens and cost, a fallen-back call's included; the chat span its own", async () => {
    const { message } = modelEvents("down");
    const overloaded: ModelEvent = { type: "error", reason: "error", error: { ...message([], "error"), usage: usage(50, 0, 0, 0.5), errorMessage: "529 Overloaded" } };
    const model = withFallback([failing("down", overloaded), answering(usage(10, 300, 40, 0.25), "up")]);
    await lastValueFrom(agentLoop(prompt, { messages: [] }, withTelemetry({ model }, { tracer })));
    const spans = exporter.getFinishedSpans();
    const [chat] = named(spans, "chat down");
    const [run] = named(spans, "invoke_agent");
    expect(chat!.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 10, "gen_ai.usage.cache_read.input_tokens": 300, "gen_ai.usage.cache_creation.input_tokens": 40 });
    expect(run!.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 60,
      "gen_ai.usage.output_tokens": 4,
      "gen_ai.usage.cache_read.input_tokens": 300,
      "gen_ai.usage.cache_creation.input_tokens": 40,
      "rxagent.usage.cost": 0.75,
    });
  });

  it("a failed chat span's error.type is the provider's HTTP status, or aborted", async () => {
    const { failed } = modelEvents("m");
    const rateLimited = failed("429 Rate limit reached", { transient: true, status: 429 });
    const stopped = failed("Request was aborted");
    const aborted: ModelEvent = { ...stopped, reason: "aborted", error: { ...stopped.error, stopReason: "aborted" } };
    await lastValueFrom(agentLoop(prompt, { messages: [] }, withTelemetry({ model: failing("limited", rateLimited) }, { tracer })));
    await lastValueFrom(agentLoop(prompt, { messages: [] }, withTelemetry({ model: failing("stopped", aborted) }, { tracer })));
    const spans = exporter.getFinishedSpans();
    expect([named(spans, "chat limited")[0]?.attributes["error.type"], named(spans, "chat stopped")[0]?.attributes["error.type"]]).toStrictEqual(["429", "aborted"]);
    expect(named(spans, "invoke_agent").map((span) => span.attributes["error.type"])).toStrictEqual(["failed", "aborted"]);
  });

  it("an unsubscribe while the model streams ends its chat span and the run's as cancelled", async () => {
    const { start } = modelEvents("m");
    const streaming: Model = { id: "m", provider: "test", api: "test", stream: () => NEVER.pipe(startWith(start)) };
    const subscription = agentLoop(prompt, { messages: [] }, withTelemetry({ model: streaming }, { tracer })).subscribe();
    expect(exporter.getFinishedSpans()).toStrictEqual([]);
    subscription.unsubscribe();
    expect(exporter.getFinishedSpans().map((span) => [span.name, span.attributes["error.type"]])).toStrictEqual([
      ["chat m", "cancelled"],
      ["invoke_agent", "cancelled"],
    ]);
  });
});
