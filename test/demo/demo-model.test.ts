import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import { demoModel } from "../../src/demo/demo-model.js";
import { demoTools } from "../../src/demo/demo-tools.js";
import { Agent } from "../../src/agent/agent.js";
import { assertEventGrammar } from "../../src/testing/index.js";
import type { AgentEvent, AssistantMessage, LlmContext, ModelEvent } from "../../src/types.js";

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toStrictEqual(expected));
const context = (text: string): LlmContext => ({ messages: [{ role: "user", content: text, timestamp: 0 }], tools: demoTools({ stepDelay: 0 }) });

describe("demoModel", () => {
  it("streams one event per delay, each with a fresh snapshot, ending in done", () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const seen: { time: number; event: ModelEvent; copy: ModelEvent }[] = [];
      demoModel({ delay: 25, scheduler })
        .stream(context("what is 12*7"), { signal: new AbortController().signal })
        .subscribe((event) => seen.push({ time: scheduler.now(), event, copy: structuredClone(event) }));
      scheduler.flush();
      expect(seen.map((entry) => entry.time)).toStrictEqual(seen.map((_entry, index) => 25 * (index + 1)));
      expect(seen.map((entry) => entry.event)).toStrictEqual(seen.map((entry) => entry.copy));
      const types = seen.map((entry) => entry.event.type);
      expect(types.slice(0, 2)).toStrictEqual(["start", "thinking_start"]);
      expect(types.slice(-3)).toStrictEqual(["toolcall_delta", "toolcall_end", "done"]);
      const last = seen[seen.length - 1]?.event as Extract<ModelEvent, { type: "done" }>;
      expect(last.reason).toBe("toolUse");
      expect(last.message.content.map((block) => block.type)).toStrictEqual(["thinking", "text", "toolCall"]);
      expect(last.message.content[2]).toStrictEqual({ type: "toolCall", id: "demo_1_1", name: "calculator", arguments: { expression: "12*7" } });
      expect(last.message.usage.output).toBeGreaterThan(0);
    });
  });

  it("ends at once with an aborted message when the signal fires, and stops its timer", () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const controller = new AbortController();
      const seen: ModelEvent[] = [];
      let completed = false;
      demoModel({ delay: 10, scheduler })
        .stream(context("tell me a story"), { signal: controller.signal })
        .subscribe({ next: (event) => seen.push(event), complete: () => (completed = true) });
      scheduler.schedule(() => controller.abort(), 45);
      scheduler.flush();
      expect(seen.map((event) => event.type)).toStrictEqual(["start", "text_start", "text_delta", "text_delta", "error"]);
      const error = seen[4] as Extract<ModelEvent, { type: "error" }>;
      expect(error.reason).toBe("aborted");
      expect(error.error).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted", content: [{ type: "text", text: "I can't " }] });
      expect(completed).toBe(true);
      expect(scheduler.actions).toHaveLength(0);
    });
  });

  it("stops its timer when unsubscribed", () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const seen: ModelEvent[] = [];
      const subscription = demoModel({ delay: 10, scheduler })
        .stream(context("hello"), { signal: new AbortController().signal })
        .subscribe((event) => seen.push(event));
      scheduler.schedule(() => subscription.unsubscribe(), 35);
      scheduler.flush();
      expect(seen).toHaveLength(3);
      expect(scheduler.actions).toHaveLength(0);
    });
  });

  it("emits synchronously with delay 0", () => {
    const seen: ModelEvent[] = [];
    demoModel({ delay: 0 }).stream(context("hello"), { signal: new AbortController().signal }).subscribe((event) => seen.push(event));
    expect(seen[seen.length - 1]).toMatchObject({ type: "done", reason: "stop" });
  });
});

describe("an Agent on the demo model", () => {
  it("runs parallel tool calls, hears steering mid-run and reacts to it, in virtual time", () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const agent = new Agent({
        model: demoModel({ delay: 5, scheduler }),
        tools: demoTools({ scheduler, stepDelay: 50, timeZone: "UTC" }),
        scheduler,
      });
      const events: AgentEvent[] = [];
      agent.prompt("what is (1+2)*3 and what time is it").subscribe((event) => events.push(event));
      // The calculator takes 3 steps of 50: the steering lands while it runs.
      let steered = false;
      agent.events$.subscribe((event) => {
        if (event.type !== "tool_execution_start" || steered) return;
        steered = true;
        scheduler.schedule(() => agent.steer("and 2^8?"), 20);
      });
      scheduler.flush();
      assertEventGrammar(events);
      const transcript = agent.messages.map((message) => {
        if (message.role === "user") return `user: ${String(message.content)}`;
        if (message.role === "toolResult") return `result: ${message.content.map((part) => (part.type === "text" ? part.text : "")).join("")}`;
        const assistant = message as AssistantMessage;
        return `assistant: ${assistant.content.map((block) => (block.type === "text" ? block.text : block.type === "toolCall" ? `[${block.name}]` : "")).join("")}`;
      });
      expect(transcript).toStrictEqual([
        "user: what is (1+2)*3 and what time is it",
        "assistant: Let me check those at once.[calculator][clock]",
        "result: (1+2)*3 = 9",
        "result: It is 00:00:00 on Thursday, 1 January 1970 (UTC).",
        "user: and 2^8?",
        'assistant: You said: "and 2^8?" — So far: (1+2)*3 = 9. It is 00:00:00 on Thursday, 1 January 1970 (UTC). Let me use the calculator tool.[calculator]',
        "result: 2^8 = 256",
        "assistant: 2^8 = 256.",
      ]);
    });
  });
});
