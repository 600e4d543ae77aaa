/**
 * The reference's newest loop features, with its own tests ported (pi-mono
 * packages/agent/test/agent-loop.test.ts, commit 02c72186): tool `usage`, length-truncated
 * messages, `prepareNextTurn`, `beforeToolCall` `{ block, reason, terminate }`, `toolTimeoutMs`
 * and the call's own `timeout` argument. Adapted to rxagent's API: `scriptedModel` instead of a
 * mock stream function, virtual time (marbles) instead of fake timers where timing matters.
 */
import { type TObject, Type } from "@sinclair/typebox";
import { lastValueFrom, map, NEVER, type Observable, type SchedulerLike, timer, toArray } from "rxjs";
import type { TestScheduler } from "rxjs/testing";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Agent } from "../../src/agent/agent.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { ToolParameters } from "../../src/tools/tool-schema.js";
import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, ToolResultMessage, Usage } from "../../src/types.js";

import { marbles } from "../helpers/marbles.js";
import { text, userMessage } from "../testing/fixtures.js";

const prompt = userMessage("echo something");

function echoTool(executed: unknown[] = [], extra: { terminate?: (value: string) => boolean; usage?: Usage } = {}): AgentTool {
  return defineTool({
    name: "echo",
    description: "Echo tool",
    parameters: Type.Object({ value: Type.String() }),
    execute: async (_id, { value }) => {
      executed.push(value);
      const result: { content: { type: "text"; text: string }[]; details: { value: string }; terminate?: boolean; usage?: Usage } = {
        content: [{ type: "text", text: `echoed: ${value}` }],
        details: { value },
      };
      if (extra.terminate) result.terminate = extra.terminate(value);
      if (extra.usage) result.usage = extra.usage;
      return result;
    },
  }) as AgentTool;
}

const call = (value: string, id = "tool-1") => ({ type: "toolCall" as const, id, name: "echo", arguments: { value } });

function run(events$: Observable<AgentEvent>): Promise<AgentEvent[]> {
  return lastValueFrom(events$.pipe(toArray()));
}

function messagesOf(events: AgentEvent[]): AgentMessage[] {
  const end = events[events.length - 1];
  if (end?.type !== "agent_end") throw new Error(`the last event is ${end?.type}`);
  return end.messages;
}

const roles = (messages: AgentMessage[]) => messages.map((message) => (message as { role: string }).role);

describe("tool usage (ported: \"should handle tool calls and results\")", () => {
  const toolUsage: Usage = { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 10, cost: { input: 0.1, output: 0.2, cacheRead: 0.3, cacheWrite: 0.4, total: 1 } };
  const patchedToolUsage: Usage = { input: 5, output: 6, cacheRead: 7, cacheWrite: 8, totalTokens: 26, cost: { input: 0.5, output: 0.6, cacheRead: 0.7, cacheWrite: 0.8, total: 2.6 } };

  it("afterToolCall sees the tool's usage and may replace it; the toolResult message keeps it", async () => {
    const executed: unknown[] = [];
    let observedToolUsage: Usage | undefined;
    const config: AgentLoopConfig = {
      model: scriptedModel([{ content: [call("hello")] }, "done"]),
      afterToolCall: async ({ result }) => {
        observedToolUsage = result.usage;
        return { usage: patchedToolUsage };
      },
    };
    const events = await run(agentLoop([prompt], { messages: [], tools: [echoTool(executed, { usage: toolUsage })] }, config));
    assertEventGrammar(events);
    expect(executed).toStrictEqual(["hello"]);
    expect(observedToolUsage).toStrictEqual(toolUsage);
    const toolEnd = events.find((event) => event.type === "tool_execution_end");
    expect(toolEnd).toMatchObject({ isError: false, result: { usage: patchedToolUsage } });
    const toolResult = messagesOf(events).find((message) => (message as ToolResultMessage).role === "toolResult") as ToolResultMessage;
    expect(toolResult.usage).toStrictEqual(patchedToolUsage);
  });

  it("a result without usage gets no usage field", async () => {
    const events = await run(agentLoop([prompt], { messages: [], tools: [echoTool()] }, { model: scriptedModel([{ content: [call("hello")] }, "done"]) }));
    const toolResult = messagesOf(events)[2] as ToolResultMessage;
    expect("usage" in toolResult).toBe(false);
  });

  it("the Agent's usage totals include what tools spent", async () => {
    const model = scriptedModel([{ content: [call("hello")], usage: { input: 100, output: 10 } }, { content: [{ type: "text", text: "done" }], usage: { input: 200, output: 20 } }]);
    const agent = new Agent({ model, tools: [echoTool([], { usage: toolUsage })] });
    await run(agent.prompt("go"));
    expect(agent.state.usage).toStrictEqual({
      input: 301,
      output: 32,
      cacheRead: 3,
      cacheWrite: 4,
      totalTokens: 340,
      cost: { input: 0.1, output: 0.2, cacheRead: 0.3, cacheWrite: 0.4, total: 1 },
    });
  });
});

describe("beforeToolCall { block, reason, terminate }", () => {
  it("ported: \"should stop after a blocked tool call when beforeToolCall sets terminate=true\"", async () => {
    const executed: unknown[] = [];
    const model = scriptedModel([{ content: [call("hello")] }, "should not run"]);
    const config: AgentLoopConfig = { model, beforeToolCall: async () => ({ block: true, reason: "Blocked by policy", terminate: true }) };
    const events = await run(agentLoop([prompt], { messages: [], tools: [echoTool(executed)] }, config));
    assertEventGrammar(events);
    const messages = messagesOf(events);
    expect(executed).toStrictEqual([]);
    expect(model.calls).toHaveLength(1);
    expect(roles(messages)).toStrictEqual(["user", "assistant", "toolResult"]);
    expect(messages[2]).toMatchObject({ isError: true, content: [text("Blocked by policy")] });
  });

  it("ported: \"should continue after a mixed batch with one terminating blocked call\"", async () => {
    const executed: unknown[] = [];
    const model = scriptedModel([{ content: [call("first", "tool-1"), call("second", "tool-2")] }, "done"]);
    const config: AgentLoopConfig = {
      model,
      toolExecution: "parallel",
      beforeToolCall: async ({ args }) => ((args as { value: string }).value === "first" ? { block: true, reason: "Blocked first", terminate: true } : undefined),
    };
    const events = await run(agentLoop([prompt], { messages: [], tools: [echoTool(executed)] }, config));
    assertEventGrammar(events);
    expect(executed).toStrictEqual(["second"]);
    expect(model.calls).toHaveLength(2);
  });

  it("a synchronous block with terminate ends the run too, and the tool_execution_end result carries terminate", () => {
    const model = scriptedModel([{ content: [call("hello")] }, "should not run"]);
    const events: AgentEvent[] = [];
    agentLoop([prompt], { messages: [], tools: [echoTool()] }, { model, beforeToolCall: () => ({ block: true, reason: "no", terminate: true }) }).subscribe((event) => events.push(event));
    expect(model.calls).toHaveLength(1);
    expect(events.find((event) => event.type === "tool_execution_end")).toStrictEqual({
      type: "tool_execution_end",
      toolCallId: "tool-1",
      toolName: "echo",
      result: { content: [text("no")], details: {}, terminate: true },
      isError: true,
    });
  });
});

describe("what afterToolCall answers is checked as tool results are", () => {
  it.each([
    [{ content: "nope", isError: "yes" }, "its content is not an array of text or image parts"],
    [{ isError: "yes" }, "its isError is a string, not a boolean"],
    [{ terminate: 1 }, "its terminate is a number, not a boolean"],
    [{ usage: 5 }, "its usage is a number, not an object"],
    ["replace me", "it answered a string, not an override object"],
  ])("%j becomes an error result saying why", async (answer, why) => {
    const config: AgentLoopConfig = { model: scriptedModel([{ content: [call("hello")] }, "done"]), afterToolCall: () => answer as never };
    const events = await run(agentLoop([prompt], { messages: [], tools: [echoTool()] }, config));
    assertEventGrammar(events);
    expect(messagesOf(events)[2]).toMatchObject({
      role: "toolResult",
      isError: true,
      content: [text(`afterToolCall for tool "echo" answered something that is not an override: ${why}.`)],
    });
  });
});

describe("terminate (ported)", () => {
  it("\"should stop after a tool batch when every tool result sets terminate=true\"", async () => {
    const model = scriptedModel([{ content: [call("hello")] }, "should not run"]);
    const events = await run(agentLoop([prompt], { messages: [], tools: [echoTool([], { terminate: () => true })] }, { model }));
    expect(model.calls).toHaveLength(1);
    expect(roles(messagesOf(events))).toStrictEqual(["user", "assistant", "toolResult"]);
    expect(events.filter((event) => event.type === "turn_end")).toHaveLength(1);
  });

  it("\"should continue after parallel tool calls when not all tool results terminate\"", async () => {
    const model = scriptedModel([{ content: [call("first", "tool-1"), call("second", "tool-2")] }, "done"]);
    const events = await run(agentLoop([prompt], { messages: [], tools: [echoTool([], { terminate: (value) => value === "first" })] }, { model, toolExecution: "parallel" }));
    expect(model.calls).toHaveLength(2);
    expect(roles(messagesOf(events))).toStrictEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
  });

  it("\"should allow afterToolCall to mark a tool batch as terminating\"", async () => {
    const model = scriptedModel([{ content: [call("hello")] }, "should not run"]);
    await run(agentLoop([prompt], { messages: [], tools: [echoTool()] }, { model, afterToolCall: async () => ({ terminate: true }) }));
    expect(model.calls).toHaveLength(1);
  });
});



describe("length-truncated messages", () => {
  it("ported: \"should not execute tool calls from a length-truncated assistant message\"", async () => {
    const executed: unknown[] = [];
    // The output hit the token limit mid tool call: arguments that validate may still be cut.
    const model = scriptedModel([{ content: [call("hel")], stopReason: "length" }, "done"]);
    const events = await run(agentLoop([prompt], { messages: [], tools: [echoTool(executed)] }, { model }));
    assertEventGrammar(events);
    expect(executed).toStrictEqual([]);
    const toolEnd = events.find((event) => event.type === "tool_execution_end");
    expect(toolEnd).toMatchObject({ isError: true });
    expect(JSON.stringify(toolEnd)).toContain("output token limit");
    // The loop goes on so the model can issue the call again.
    expect(model.calls).toHaveLength(2);
    expect(roles(messagesOf(events))).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
  });

  it("answers every call of the message in order, each start, end and result, then the next turn", () => {
    const model = scriptedModel([{ content: [call("a", "t1"), call("b", "t2")], stopReason: "length" }, "done"]);
    const events: AgentEvent[] = [];
    agentLoop([prompt], { messages: [], tools: [echoTool()] }, { model }).subscribe((event) => events.push(event));
    const message = (id: string): ToolResultMessage => ({
      role: "toolResult",
      toolCallId: id,
      toolName: "echo",
      content: [text('Tool call "echo" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.')],
      details: {},
      isError: true,
      timestamp: expect.any(Number) as never,
    });
    const turnEnd = events.findIndex((event) => event.type === "turn_end");
    const toolEvents = events.slice(0, turnEnd).filter((event) => event.type.startsWith("tool_") || (event.type === "message_end" && event.message.role === "toolResult"));
    expect(toolEvents.map((event) => [event.type, "toolCallId" in event ? event.toolCallId : (event as { message: ToolResultMessage }).message.toolCallId])).toStrictEqual([
      ["tool_execution_start", "t1"],
      ["tool_execution_end", "t1"],
      ["message_end", "t1"],
      ["tool_execution_start", "t2"],
      ["tool_execution_end", "t2"],
      ["message_end", "t2"],
    ]);
    expect(events[turnEnd]).toMatchObject({ type: "turn_end", toolResults: [message("t1"), message("t2")] });
    expect(model.calls).toHaveLength(2);
  });
});

describe("toolTimeoutMs and the call's timeout argument (virtual time)", () => {
  const slow = (ms: number, parameters: TObject | ToolParameters = Type.Object({ value: Type.String(), timeout: Type.Optional(Type.Number()) }), extra: { timeoutMs?: number } = {}) => (scheduler: SchedulerLike, finished: string[]) =>
    defineTool({
      name: "echo",
      description: "Echo tool",
      parameters,
      ...extra,
      execute: (_id, args) =>
        timer(ms, scheduler).pipe(
          map(() => {
            finished.push((args as { value: string }).value);
            return { content: [text(`echoed: ${(args as { value: string }).value}`)], details: {} };
          }),
        ),
    }) as AgentTool;

  /** Runs one tool call in virtual time; returns its tool_execution_end and the frame it came at, from the run's start. */
  function runOnce(m: { scheduler: TestScheduler; flush(): void }, tool: AgentTool, args: Record<string, unknown>, config: Partial<AgentLoopConfig> = {}) {
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "tool-1", name: "echo", arguments: args }] }, "done"]);
    let end: { frame: number; event: AgentEvent } | undefined;
    const events: AgentEvent[] = [];
    const start = m.scheduler.now();
    agentLoop([prompt], { messages: [], tools: [tool] }, { model, scheduler: m.scheduler, ...config }).subscribe((event) => {
      events.push(event);
      if (event.type === "tool_execution_end") end = { frame: m.scheduler.now() - start, event };
    });
    m.flush();
    assertEventGrammar(events);
    return end!;
  }

  const timedOutText = (seconds: number) =>
    `Tool "echo" timed out after ${seconds} seconds. The tool call exceeded its time limit; re-issue it with a longer timeout (for example a "timeout" argument in seconds) or split the work into smaller steps.`;

  it(
    "ported: \"should time out a tool call after the default 3 minute limit\" (toolTimeoutMs 1000, a 60 s tool)",
    marbles((m) => {
      const finished: string[] = [];
      const end = runOnce(m, slow(60_000)(m.scheduler, finished), { value: "hello" }, { toolTimeoutMs: 1_000 });
      expect(end).toStrictEqual({
        frame: 1_000,
        event: { type: "tool_execution_end", toolCallId: "tool-1", toolName: "echo", result: { content: [text(timedOutText(1))], details: {} }, isError: true },
      });
      expect(finished).toStrictEqual([]);
    }),
  );

  it(
    "without toolTimeoutMs the default is 3 minutes",
    marbles((m) => {
      const finished: string[] = [];
      const end = runOnce(m, slow(240_000)(m.scheduler, finished), { value: "hello" });
      expect(end.frame).toBe(180_000);
      expect(end.event).toMatchObject({ isError: true, result: { content: [text(timedOutText(180))] } });
      expect(finished).toStrictEqual([]);
    }),
  );

  it(
    "ported: \"should honor a per-call timeout override and timeout 0 to disable the timer\"",
    marbles((m) => {
      const finished: string[] = [];
      const tool = slow(500)(m.scheduler, finished);
      // A longer per-call override (2 s) survives the 100 ms default.
      expect(runOnce(m, tool, { value: "long", timeout: 2 }, { toolTimeoutMs: 100 }).event).toMatchObject({ isError: false });
      // timeout 0 disables the timer entirely.
      expect(runOnce(m, tool, { value: "unlimited", timeout: 0 }, { toolTimeoutMs: 100 }).event).toMatchObject({ isError: false });
      // No override keeps the 100 ms default and times out the 500 ms tool.
      const timedOut = runOnce(m, tool, { value: "slow" }, { toolTimeoutMs: 100 });
      expect(timedOut.event).toMatchObject({ isError: true, result: { content: [text(timedOutText(0.1))] } });
      expect(finished).toStrictEqual(["long", "unlimited"]);
    }),
  );

  it(
    "a timeout argument counts for a tool with a Standard Schema (zod) that declares one, as for TypeBox",
    marbles((m) => {
      const finished: string[] = [];
      const tool = slow(500, z.object({ value: z.string(), timeout: z.number().optional() }))(m.scheduler, finished);
      expect(runOnce(m, tool, { value: "long", timeout: 2 }, { toolTimeoutMs: 100 }).event).toMatchObject({ isError: false });
      expect(finished).toStrictEqual(["long"]);
    }),
  );

  it(
    "a timeout argument counts only when the tool's schema declares one",
    marbles((m) => {
      const finished: string[] = [];
      const tool = slow(500, Type.Object({ value: Type.String() }))(m.scheduler, finished);
      const end = runOnce(m, tool, { value: "x", timeout: 0 }, { toolTimeoutMs: 100 });
      expect(end.frame).toBe(100);
      expect(end.event).toMatchObject({ isError: true });
    }),
  );

  it(
    "toolTimeoutMs 0 disables the loop-wide timer; a tool's own timeoutMs wins over toolTimeoutMs, with its own text",
    marbles((m) => {
      const finished: string[] = [];
      expect(runOnce(m, slow(400_000)(m.scheduler, finished), { value: "unlimited" }, { toolTimeoutMs: 0 }).event).toMatchObject({ isError: false });
      const own = runOnce(m, slow(500, undefined, { timeoutMs: 50 })(m.scheduler, finished), { value: "own" }, { toolTimeoutMs: 1_000 });
      expect(own).toMatchObject({ frame: 50, event: { isError: true, result: { content: [text('Tool "echo" timed out after 50 ms')] } } });
      const longer = runOnce(m, slow(500, undefined, { timeoutMs: 5_000 })(m.scheduler, finished), { value: "longer" }, { toolTimeoutMs: 100 });
      expect(longer.event).toMatchObject({ isError: false });
      expect(finished).toStrictEqual(["unlimited", "longer"]);
    }),
  );

  it(
    "the timed-out call's signal fires",
    marbles((m) => {
      let signal: AbortSignal | undefined;
      const tool = defineTool({
        name: "echo",
        description: "e",
        parameters: Type.Object({ value: Type.String() }),
        execute: (_id, _args, context) => {
          signal = context.signal;
          return NEVER;
        },
      }) as AgentTool;
      runOnce(m, tool, { value: "x" }, { toolTimeoutMs: 10 });
      expect(signal?.aborted).toBe(true);
      expect(String(signal?.reason)).toContain('Tool "echo" timed out');
    }),
  );

  it(
    "a synchronous tool arms no timer; one that did not settle synchronously arms exactly one",
    marbles((m) => {
      const schedule = vi.spyOn(m.scheduler, "schedule");
      const timerDelays = () => schedule.mock.calls.map((callArguments) => callArguments[1]).filter((delay) => delay === 180_000);
      const sync = defineTool({ name: "echo", description: "e", parameters: Type.Object({ value: Type.String() }), execute: () => ({ content: [text("now")], details: {} }) }) as AgentTool;
      runOnce(m, sync, { value: "x" });
      expect(timerDelays()).toStrictEqual([]);
      runOnce(m, slow(5)(m.scheduler, []), { value: "x" });
      expect(timerDelays()).toStrictEqual([180_000]);
    }),
  );
});

describe("prepareNextTurn", () => {
  it("ported: \"should use prepareNextTurn snapshot before continuing\"", async () => {
    let prepareCalls = 0;
    let prepared = false;
    const model = scriptedModel([{ content: [call("hello")] }, "done"]);
    const config: AgentLoopConfig = {
      model,
      prepareNextTurn: async ({ context: currentContext }) => {
        prepareCalls++;
        if (prepared) return undefined;
        prepared = true;
        return { context: { systemPrompt: "second prompt", messages: currentContext.messages.slice(), tools: currentContext.tools! } };
      },
    };
    await run(agentLoop([prompt], { systemPrompt: "first prompt", messages: [], tools: [echoTool()] }, config));
    expect(model.calls).toHaveLength(2);
    expect(prepareCalls).toBe(1);
    expect(model.calls[1]!.systemPrompt).toBe("second prompt");
  });

  it("is called between turn_end and the next turn_start with the turn just ended, never before the first turn", () => {
    const order: string[] = [];
    const model = scriptedModel([{ content: [call("hello")] }, "done"]);
    const seen: unknown[] = [];
    const sync = defineTool({ name: "echo", description: "s", parameters: Type.Object({ value: Type.String() }), execute: () => ({ content: [text("ok")], details: {} }) }) as AgentTool;
    agentLoop([prompt], { messages: [], tools: [sync] }, {
      model,
      prepareNextTurn: (turn) => {
        order.push("prepareNextTurn");
        seen.push([turn.message.content, turn.toolResults.map((result) => result.toolCallId), roles(turn.context.messages), roles(turn.newMessages)]);
        return undefined;
      },
    }).subscribe((event) => {
      if (event.type === "turn_start" || event.type === "turn_end") order.push(event.type);
    });
    expect(order).toStrictEqual(["turn_start", "turn_end", "prepareNextTurn", "turn_start", "turn_end"]);
    expect(seen).toStrictEqual([[[call("hello")], ["tool-1"], ["user", "assistant", "toolResult"], ["user", "assistant", "toolResult"]]]);
  });

  it("may replace the model and the transcript; agent_end still reports every message the run added", () => {
    const second = scriptedModel(["from the second model"], { id: "second" });
    const first = scriptedModel([{ content: [{ type: "toolCall", id: "tool-1", name: "sync", arguments: {} }] }]);
    const summary = userMessage("summary of what came before");
    const sync = defineTool({ name: "sync", description: "s", parameters: Type.Object({}), execute: () => ({ content: [text("ok")], details: {} }) }) as AgentTool;
    const old = userMessage("old");
    const events: AgentEvent[] = [];
    agentLoop([prompt], { messages: [old], tools: [sync] }, {
      model: first,
      prepareNextTurn: () => ({ model: second, context: { messages: [summary], tools: [sync] } }),
    }).subscribe((event) => events.push(event));
    assertEventGrammar(events);
    expect(first.calls).toHaveLength(1);
    expect(second.calls.map((context) => context.messages)).toStrictEqual([[summary]]);
    expect(roles(messagesOf(events))).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    expect((messagesOf(events)[3] as { model: string }).model).toBe("second");
  });

  it("a throw, or an answer that is not an update, ends the run with an error message naming the hook", () => {
    for (const [hook, why] of [
      [
        () => {
          throw new Error("compaction failed");
        },
        "compaction failed",
      ],
      [() => "compact please", "it returned a string, not { context, model }"],
      [() => ({ context: { messages: "none" } }), "its context has no messages array"],
    ] as const) {
      const model = scriptedModel([{ content: [call("hello")] }, "never"]);
      const sync = defineTool({ name: "echo", description: "s", parameters: Type.Object({ value: Type.String() }), execute: () => ({ content: [text("ok")], details: {} }) }) as AgentTool;
      const events: AgentEvent[] = [];
      agentLoop([prompt], { messages: [], tools: [sync] }, { model, prepareNextTurn: hook as never }).subscribe((event) => events.push(event));
      assertEventGrammar(events);
      expect(model.calls).toHaveLength(1);
      expect(messagesOf(events)[3]).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: `prepareNextTurn failed: ${why}` });
    }
  });

  it(
    "an abort while it is pending ends the run at once with an aborted message",
    marbles((m) => {
      const model = scriptedModel([{ content: [call("hello")] }, "never"]);
      const sync = defineTool({ name: "echo", description: "s", parameters: Type.Object({ value: Type.String() }), execute: () => ({ content: [text("ok")], details: {} }) }) as AgentTool;
      const controller = new AbortController();
      m.scheduler.schedule(() => controller.abort(), 5);
      const events: AgentEvent[] = [];
      let endedAt = -1;
      agentLoop([prompt], { messages: [], tools: [sync] }, { model, scheduler: m.scheduler, signal: controller.signal, prepareNextTurn: () => NEVER }).subscribe((event) => {
        events.push(event);
        if (event.type === "agent_end") endedAt = m.scheduler.now();
      });
      m.flush();
      assertEventGrammar(events);
      expect(endedAt).toBe(5);
      expect(model.calls).toHaveLength(1);
      expect(messagesOf(events)[3]).toMatchObject({ role: "assistant", stopReason: "aborted" });
    }),
  );
});
