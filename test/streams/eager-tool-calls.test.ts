import { Type } from "@sinclair/typebox";
import { map, timer, type SchedulerLike } from "rxjs";
import type { TestScheduler } from "rxjs/testing";
import type { Context } from "rxjs-marbles";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel, type ScriptedBlock, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import type { AgentEvent, AgentLoopConfig, AgentTool, AssistantMessage, Model, ModelEvent, ToolCall } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import { userMessage } from "../testing/fixtures.js";

/**
 * The model streams one event every 10 frames. A reply of calls a, b and then text:
 *   start 10 · a: toolcall_start 20, delta 30, end 40 · b: 50, 60, end 70 · text 80..(deltas)..text_end · done
 * The `slow` tool sleeps `ms` frames on the virtual clock and logs when it starts and when its signal fires.
 */
const DELAY = 10;

interface Log {
  entries: string[];
  events: AgentEvent[];
}

function slowTool(scheduler: SchedulerLike, log: Log, options: Partial<AgentTool> = {}, name = "slow"): AgentTool {
  return {
    ...defineTool({
      name,
      description: "Takes `ms` milliseconds",
      parameters: Type.Object({ ms: Type.Number() }),
      execute: (id, { ms }, { signal }) => {
        log.entries.push(`${scheduler.now()} execute ${id}`);
        signal.addEventListener("abort", () => log.entries.push(`${scheduler.now()} signal ${id}: ${(signal.reason as Error).message}`));
        return timer(ms, scheduler).pipe(map(() => textResult(`slept ${ms}`)));
      },
    }),
    ...options,
  } as AgentTool;
}

function call(id: string, ms: number, name = "slow"): ScriptedBlock {
  return { type: "toolCall", id, name, arguments: { ms } };
}

const words: ScriptedBlock = { type: "text", text: "one two three four five six" };

function run(m: { scheduler: TestScheduler }, turns: ScriptedTurn[], config: Partial<AgentLoopConfig>, tools: (log: Log) => AgentTool[], model?: Model): Log {
  const log: Log = { entries: [], events: [] };
  const scheduler = m.scheduler;
  const loop$ = agentLoop([userMessage("go")], { messages: [], tools: tools(log) }, {
    model: model ?? scriptedModel(turns, { scheduler, delay: DELAY }),
    scheduler,
    ...config,
  });
  loop$.subscribe((event) => {
    log.events.push(event);
    if (event.type !== "message_update") log.entries.push(`${scheduler.now()} ${describeEvent(event)}`);
  });
  return log;
}

function describeEvent(event: AgentEvent): string {
  switch (event.type) {
    case "tool_execution_start":
      return `${event.type} ${event.toolCallId}`;
    case "tool_execution_end": {
      const text = event.result.content[0]?.type === "text" ? event.result.content[0].text : "";
      return `${event.type} ${event.toolCallId} ${event.isError ? "error" : "ok"}: ${text}`;
    }
    case "message_start":
    case "message_end": {
      const message = event.message as { role: string; toolCallId?: string; stopReason?: string };
      const stopReason = event.type === "message_end" && message.stopReason ? ` ${message.stopReason}` : "";
      return `${event.type} ${message.role}${message.toolCallId ? ` ${message.toolCallId}` : ""}${stopReason}`;
    }
    case "agent_end":
      return `${event.type} ${event.reason}`;
    default:
      return event.type;
  }
}

/**
 * A model whose first reply is `start` at 10, a `toolcall_end` carrying `early` at 20 and `done`
 * with `final` as the only call at 30; its second reply is "ok" at 10.
 */
function oneCallModel(m: Context, early: ToolCall, final: ToolCall): Model {
  const base: AssistantMessage = {
    role: "assistant",
    content: [],
    api: "custom",
    provider: "custom",
    model: "custom",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "toolUse",
    timestamp: 0,
  };
  let calls = 0;
  return {
    id: "custom",
    provider: "custom",
    api: "custom",
    stream: () => {
      calls += 1;
      if (calls > 1) return m.cold<ModelEvent>("10ms (d|)", { d: { type: "done", reason: "stop", message: { ...base, stopReason: "stop", content: [{ type: "text", text: "ok" }] } } });
      return m.cold<ModelEvent>("10ms s 9ms e 9ms (d|)", {
        s: { type: "start", partial: base },
        e: { type: "toolcall_end", contentIndex: 0, toolCall: early, partial: { ...base, content: [final] } },
        d: { type: "done", reason: "toolUse", message: { ...base, content: [final] } },
      });
    },
  };
}

/** The events of a turn whose model call streams `start … done` and the opening before it. */
const OPENING = ["0 agent_start", "0 turn_start", "0 message_start user", "0 message_end user"];

describe("eager tool execution", () => {
  it(
    "starts an eager call at its toolcall_end while the message streams; its events wait for message_end",
    marbles((m) => {
      // a: 100 frames from 40 (ends at 140); b: 5 frames from 70 (ends at 75, long before message_end).
      const log = run(m, [{ content: [call("a", 100), call("b", 5), words] }, "done"], {}, (log) => [slowTool(m.scheduler, log, { eager: true })]);
      m.flush();
      expect(log.entries).toStrictEqual([
        ...OPENING,
        "10 message_start assistant",
        "40 execute a",
        "70 execute b",
        // text_start 80, six deltas 90..140, text_end 150, done 160
        "160 message_end assistant toolUse",
        "160 tool_execution_start a",
        "160 tool_execution_start b",
        "160 tool_execution_end b ok: slept 5",
        "160 tool_execution_end a ok: slept 100",
        "160 message_start toolResult a",
        "160 message_end toolResult a",
        "160 message_start toolResult b",
        "160 message_end toolResult b",
        "160 turn_end",
        "160 turn_start",
        "170 message_start assistant",
        "210 message_end assistant stop",
        "210 turn_end",
        "210 agent_end idle",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "without eager, the same calls start at message_end (the reference's timing)",
    marbles((m) => {
      const log = run(m, [{ content: [call("a", 100), call("b", 5), words] }, "done"], {}, (log) => [slowTool(m.scheduler, log)]);
      m.flush();
      expect(log.entries).toStrictEqual([
        ...OPENING,
        "10 message_start assistant",
        "160 message_end assistant toolUse",
        "160 tool_execution_start a",
        "160 execute a",
        "160 tool_execution_start b",
        "160 execute b",
        "165 tool_execution_end b ok: slept 5",
        "260 tool_execution_end a ok: slept 100",
        "260 message_start toolResult a",
        "260 message_end toolResult a",
        "260 message_start toolResult b",
        "260 message_end toolResult b",
        "260 turn_end",
        "260 turn_start",
        "270 message_start assistant",
        "310 message_end assistant stop",
        "310 turn_end",
        "310 agent_end idle",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "eagerTools makes every tool eager except one that says eager: false, which holds the calls after it",
    marbles((m) => {
      const log = run(m, [{ content: [call("a", 5), call("b", 5, "lazy"), call("c", 5), words] }, "done"], { eagerTools: true }, (log) => [
        slowTool(m.scheduler, log),
        slowTool(m.scheduler, log, { eager: false }, "lazy"),
      ]);
      m.flush();
      // a runs 40..45; b (lazy) and c after it wait for message_end: 3 calls x 3 events + text 8 events + done = 190.
      expect(log.entries.slice(4, 12)).toStrictEqual([
        "10 message_start assistant",
        "40 execute a",
        "190 message_end assistant toolUse",
        "190 tool_execution_start a",
        "190 tool_execution_end a ok: slept 5",
        "190 message_start toolResult a",
        "190 message_end toolResult a",
        "190 tool_execution_start b",
      ]);
      expect(log.entries.filter((entry) => entry.includes("execute"))).toStrictEqual(["40 execute a", "190 execute b", "190 execute c"]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "a sequential tool never starts early, and runs only once the early calls before it are done",
    marbles((m) => {
      const log = run(m, [{ content: [call("a", 200), call("s", 5, "serial"), call("c", 5)] }, "done"], { eagerTools: true }, (log) => [
        slowTool(m.scheduler, log),
        slowTool(m.scheduler, log, { executionMode: "sequential" }, "serial"),
      ]);
      m.flush();
      // a starts at 40 and ends at 240; done at 110.
      expect(log.entries.slice(4)).toStrictEqual([
        "10 message_start assistant",
        "40 execute a",
        "110 message_end assistant toolUse",
        "110 tool_execution_start a",
        "240 tool_execution_end a ok: slept 200",
        "240 message_start toolResult a",
        "240 message_end toolResult a",
        "240 tool_execution_start s",
        "240 execute s",
        "245 tool_execution_end s ok: slept 5",
        "245 message_start toolResult s",
        "245 message_end toolResult s",
        "245 tool_execution_start c",
        "245 execute c",
        "250 tool_execution_end c ok: slept 5",
        "250 message_start toolResult c",
        "250 message_end toolResult c",
        "250 turn_end",
        "250 turn_start",
        "260 message_start assistant",
        "300 message_end assistant stop",
        "300 turn_end",
        "300 agent_end idle",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "nothing starts early when the loop's toolExecution is sequential",
    marbles((m) => {
      const log = run(m, [{ content: [call("a", 5), call("b", 5)] }, "done"], { eagerTools: true, toolExecution: "sequential" }, (log) => [slowTool(m.scheduler, log)]);
      m.flush();
      expect(log.entries.filter((entry) => entry.includes("execute"))).toStrictEqual(["80 execute a", "85 execute b"]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "maxConcurrency counts early and late calls together",
    marbles((m) => {
      // a runs 40..140; b arrives at 70 but waits for a's slot; c (not eager) starts after b.
      const log = run(m, [{ content: [call("a", 100), call("b", 10), call("c", 10, "lazy")] }, "done"], { maxConcurrency: 1 }, (log) => [
        slowTool(m.scheduler, log, { eager: true }),
        slowTool(m.scheduler, log, {}, "lazy"),
      ]);
      m.flush();
      expect(log.entries.filter((entry) => entry.includes("execute") || entry.includes("tool_execution"))).toStrictEqual([
        "40 execute a",
        "110 tool_execution_start a",
        "110 tool_execution_start b",
        "110 tool_execution_start c",
        "140 tool_execution_end a ok: slept 100",
        "140 execute b",
        "150 tool_execution_end b ok: slept 10",
        "150 execute c",
        "160 tool_execution_end c ok: slept 10",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "a tool's concurrency holds across early and late calls",
    marbles((m) => {
      const log = run(m, [{ content: [call("a", 100), call("b", 10)] }, "done"], { eagerTools: true }, (log) => [slowTool(m.scheduler, log, { concurrency: 1 })]);
      m.flush();
      expect(log.entries.filter((entry) => entry.includes("execute"))).toStrictEqual(["40 execute a", "140 execute b"]);
      assertEventGrammar(log.events);
    }),
  );

  for (const [stopReason, expected] of [
    ["error", ["130 message_end assistant error", "130 signal a: Tool call was cancelled", "130 turn_end", "130 agent_end failed"]],
    ["aborted", ["130 message_end assistant aborted", "130 signal a: Tool call was cancelled", "130 turn_end", "130 agent_end aborted"]],
  ] as const) {
    it(
      `cancels the early calls of a message that ends with stopReason "${stopReason}": no tool events, no results`,
      marbles((m) => {
        const log = run(m, [{ content: [call("a", 500), words], stopReason }], { eagerTools: true }, (log) => [slowTool(m.scheduler, log)]);
        m.flush();
        // a: 10..40; text: 50 start, six deltas to 110, end 120, error 130 → message_end at 130.
        expect(log.entries.slice(4)).toStrictEqual(["10 message_start assistant", "40 execute a", ...expected]);
        const end = log.events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
        expect(end.messages.map((message) => message.role)).toStrictEqual(["user", "assistant"]);
        assertEventGrammar(log.events);
      }),
    );
  }

  it(
    "cancels the early calls when the run is aborted while the message streams",
    marbles((m) => {
      const controller = new AbortController();
      const log = run(m, [{ content: [call("a", 500), words] }], { eagerTools: true, signal: controller.signal }, (log) => [slowTool(m.scheduler, log)]);
      m.scheduler.schedule(() => controller.abort(), 65);
      m.flush();
      expect(log.entries.slice(4)).toStrictEqual([
        "10 message_start assistant",
        "40 execute a",
        // The aborted message ends first; its end tears the early batch down.
        "65 message_end assistant aborted",
        "65 signal a: Tool call was cancelled",
        "65 turn_end",
        "65 agent_end aborted",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "unsubscribing while the message streams tears the early calls down: their signals fire",
    marbles((m) => {
      const log: Log = { entries: [], events: [] };
      const loop$ = agentLoop([userMessage("go")], { messages: [], tools: [slowTool(m.scheduler, log)] }, {
        model: scriptedModel([{ content: [call("a", 500), words] }], { scheduler: m.scheduler, delay: DELAY }),
        scheduler: m.scheduler,
        eagerTools: true,
      });
      const subscription = loop$.subscribe((event) => log.events.push(event));
      m.scheduler.schedule(() => subscription.unsubscribe(), 65);
      m.flush();
      expect(log.entries).toStrictEqual(["40 execute a", "65 signal a: Tool call was cancelled"]);
      assertEventGrammar(log.events, { complete: false });
    }),
  );

  it(
    "a message cut by the token limit: the early call's signal fires and every call gets the token-limit result, as without eager",
    marbles((m) => {
      const log = run(m, [{ content: [call("a", 500), call("b", 500)], stopReason: "length" }, "done"], { eagerTools: true }, (log) => [slowTool(m.scheduler, log)]);
      m.flush();
      expect(log.entries.slice(4, 18).map((entry) => entry.replace(/: Tool call "slow" was not executed.*/, ": cut"))).toStrictEqual([
        "10 message_start assistant",
        "40 execute a",
        "70 execute b",
        "80 message_end assistant length",
        "80 signal a: Tool call was cancelled",
        "80 signal b: Tool call was cancelled",
        "80 tool_execution_start a",
        "80 tool_execution_end a error: cut",
        "80 message_start toolResult a",
        "80 message_end toolResult a",
        "80 tool_execution_start b",
        "80 tool_execution_end b error: cut",
        "80 message_start toolResult b",
        "80 message_end toolResult b",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "a repeated call id does not start early: it is renamed <id>_2 at message_end and runs then",
    marbles((m) => {
      const log = run(m, [{ content: [call("x", 5), call("x", 5)] }, "done"], { eagerTools: true }, (log) => [slowTool(m.scheduler, log)]);
      m.flush();
      expect(log.entries.filter((entry) => entry.includes("execute") || entry.includes("toolResult"))).toStrictEqual([
        "40 execute x",
        // x is done at 45: its result is out as soon as the message has ended.
        "80 message_start toolResult x",
        "80 message_end toolResult x",
        "80 execute x_2",
        "85 message_start toolResult x_2",
        "85 message_end toolResult x_2",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "invalid arguments get their validation error result, prepared early, reported after message_end",
    marbles((m) => {
      const log = run(m, [{ content: [{ type: "toolCall", id: "a", name: "slow", arguments: { ms: "soon" } }, words] }, "done"], { eagerTools: true }, (log) => [
        slowTool(m.scheduler, log),
      ]);
      m.flush();
      expect(log.entries.slice(4, 9)).toStrictEqual([
        "10 message_start assistant",
        "130 message_end assistant toolUse",
        "130 tool_execution_start a",
        `130 tool_execution_end a error: Invalid arguments for tool "slow":\n  - /ms: Expected number (received "soon")\nReceived arguments: {"ms":"soon"}`,
        "130 message_start toolResult a",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "beforeToolCall runs at the call's toolcall_end and sees the message so far, without it in the transcript",
    marbles((m) => {
      const seen: string[] = [];
      const log = run(
        m,
        [{ content: [call("a", 5), call("b", 5)] }, "done"],
        {
          eagerTools: true,
          beforeToolCall: ({ toolCall, assistantMessage, context }) => {
            seen.push(`${m.scheduler.now()} ${toolCall.id}: ${assistantMessage.content.length} blocks, ${context.messages.length} messages`);
            return toolCall.id === "b" ? { block: true, reason: "not b" } : undefined;
          },
        },
        (log) => [slowTool(m.scheduler, log)],
      );
      m.flush();
      expect(seen).toStrictEqual(["40 a: 1 blocks, 1 messages", "70 b: 2 blocks, 1 messages"]);
      expect(log.entries.filter((entry) => entry.includes("tool_execution"))).toStrictEqual([
        "80 tool_execution_start a",
        "80 tool_execution_end a ok: slept 5",
        "80 tool_execution_start b",
        "80 tool_execution_end b error: not b",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "a tool that needs approval does not start early: it and the calls after it wait for message_end, then for the answer",
    marbles((m) => {
      const approvals = m.hot<{ toolCallId: string; approved: boolean }>("200ms y", { y: { toolCallId: "p", approved: true } });
      const log = run(m, [{ content: [call("a", 5), call("p", 5, "guarded"), call("c", 5)] }, "done"], { eagerTools: true, approvals }, (log) => [
        slowTool(m.scheduler, log),
        slowTool(m.scheduler, log, { needsApproval: true }, "guarded"),
      ]);
      m.flush();
      // done at 110: a ran 40..45; p waits for the answer at 200 while c runs at once.
      expect(log.entries.filter((entry) => /execute|tool_/.test(entry))).toStrictEqual([
        "40 execute a",
        "110 tool_execution_start a",
        "110 tool_execution_end a ok: slept 5",
        "110 tool_execution_start p",
        "110 tool_approval_start",
        "110 tool_execution_start c",
        "110 execute c",
        "115 tool_execution_end c ok: slept 5",
        "200 tool_approval_end",
        "200 execute p",
        "205 tool_execution_end p ok: slept 5",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "steering that interrupts tools reaches a call started early, as it would one started at message_end",
    marbles((m) => {
      const steering = m.hot("60ms s", { s: userMessage("stop that", 60) });
      const log = run(m, [{ content: [call("a", 500), words] }, "done"], { eagerTools: true, steeringInterruptsTools: true, steering }, (log) => [slowTool(m.scheduler, log)]);
      m.flush();
      expect(log.entries.slice(4, 14)).toStrictEqual([
        "10 message_start assistant",
        "40 execute a",
        "60 signal a: Skipped due to queued user message.",
        "130 message_end assistant toolUse",
        "130 tool_execution_start a",
        "130 tool_execution_end a error: Skipped due to queued user message.",
        "130 message_start toolResult a",
        "130 message_end toolResult a",
        "130 turn_end",
        "130 turn_start",
      ]);
      expect(log.entries[14]).toBe("130 message_start user");
      assertEventGrammar(log.events);
    }),
  );

  it(
    "toolTimeoutMs counts from the early start",
    marbles((m) => {
      const log = run(m, [{ content: [call("a", 500), words] }, "done"], { eagerTools: true, toolTimeoutMs: 50 }, (log) => [slowTool(m.scheduler, log)]);
      m.flush();
      expect(log.entries.slice(4, 9)).toStrictEqual([
        "10 message_start assistant",
        "40 execute a",
        expect.stringMatching(/^90 signal a: Tool "slow" timed out after /),
        "130 message_end assistant toolUse",
        "130 tool_execution_start a",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "a cancel from the cancellations source reaches a call started early",
    marbles((m) => {
      const cancellations = m.hot<{ toolCallId: string; reason: string }>("60ms c", { c: { toolCallId: "a", reason: "enough" } });
      const log = run(m, [{ content: [call("a", 500), words] }, "done"], { eagerTools: true, cancellations }, (log) => [slowTool(m.scheduler, log)]);
      m.flush();
      expect(log.entries.slice(4, 9)).toStrictEqual([
        "10 message_start assistant",
        "40 execute a",
        "60 signal a: Tool call was cancelled: enough",
        "130 message_end assistant toolUse",
        "130 tool_execution_start a",
      ]);
      expect(log.entries[9]).toBe("130 tool_execution_end a error: Tool call was cancelled: enough");
      assertEventGrammar(log.events);
    }),
  );

  it(
    "a provider whose final message disagrees with its toolcall_end: the early call is cancelled and the final calls run as without eager",
    marbles((m) => {
      const early: ToolCall = { type: "toolCall", id: "a", name: "slow", arguments: { ms: 500 } };
      const final: ToolCall = { type: "toolCall", id: "a", name: "slow", arguments: { ms: 5 } };
      const log = run(m, [], { eagerTools: true }, (log) => [slowTool(m.scheduler, log)], oneCallModel(m, early, final));
      m.flush();
      expect(log.entries.slice(4, 12)).toStrictEqual([
        "10 message_start assistant",
        "20 execute a",
        "30 message_end assistant toolUse",
        "30 signal a: Tool call was cancelled",
        "30 tool_execution_start a",
        "30 execute a",
        "35 tool_execution_end a ok: slept 5",
        "35 message_start toolResult a",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "a malformed call in a toolcall_end event starts nothing early: the final message's call runs at message_end",
    marbles((m) => {
      const final: ToolCall = { type: "toolCall", id: "a", name: "slow", arguments: { ms: 5 } };
      const log = run(m, [], { eagerTools: true }, (log) => [slowTool(m.scheduler, log)], oneCallModel(m, null as unknown as ToolCall, final));
      m.flush();
      expect(log.entries.slice(4, 11)).toStrictEqual([
        "10 message_start assistant",
        "30 message_end assistant toolUse",
        "30 tool_execution_start a",
        "30 execute a",
        "35 tool_execution_end a ok: slept 5",
        "35 message_start toolResult a",
        "35 message_end toolResult a",
      ]);
      assertEventGrammar(log.events);
    }),
  );

  it(
    "an Agent passes eagerTools through, and its cancelToolCall reaches an early call once the message has ended",
    marbles((m) => {
      const log: Log = { entries: [], events: [] };
      const model = scriptedModel([{ content: [call("a", 500), call("b", 5)] }, "done"], { scheduler: m.scheduler, delay: DELAY });
      const agent = new Agent({ model, tools: [slowTool(m.scheduler, log)], scheduler: m.scheduler, eagerTools: true });
      agent.prompt("go").subscribe((event) => {
        log.events.push(event);
        if (event.type.startsWith("tool_execution")) log.entries.push(`${m.scheduler.now()} ${describeEvent(event)}`);
      });
      m.scheduler.schedule(() => agent.cancelToolCall("a", "enough"), 90);
      m.flush();
      expect(log.entries).toStrictEqual([
        "40 execute a",
        "70 execute b",
        "80 tool_execution_start a",
        "80 tool_execution_start b",
        "80 tool_execution_end b ok: slept 5",
        "90 signal a: Tool call was cancelled: enough",
        "90 tool_execution_end a error: Tool call was cancelled: enough",
      ]);
      assertEventGrammar(log.events);
    }),
  );
});
