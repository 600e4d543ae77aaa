import * as Reference from "@mariozechner/pi-agent-core";
import { type AssistantMessage, type AssistantMessageEvent, EventStream } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import * as DropIn from "../../src/pi-agent-core/index.js";

// What pi's coding agent needs from `Agent` (issue 34), each case run on the real
// @mariozechner/pi-agent-core 0.73.1 and on the drop-in, with the same expectations. The first two
// are pi-mono's own `continue()` tests (reference/agent.test.ts) with 0.73.1's `state.messages = …`
// in place of 0.58's `replaceMessages`.

type AgentClass = typeof DropIn.Agent | typeof Reference.Agent;
const engines: [string, AgentClass][] = [
  ["reference 0.73.1", Reference.Agent],
  ["rxagent/pi-agent-core", DropIn.Agent],
];

function assistant(text: string, stopReason: AssistantMessage["stopReason"] = "stop"): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "openai-responses",
    provider: "openai",
    model: "mock",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason,
    timestamp: 1,
  };
}

const user = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }], timestamp: 1 });

function streamOf(events: AssistantMessageEvent[]): EventStream<AssistantMessageEvent, AssistantMessage> {
  const stream = new EventStream<AssistantMessageEvent, AssistantMessage>(
    (event) => event.type === "done" || event.type === "error",
    (event) => (event.type === "done" ? event.message : event.type === "error" ? event.error : assistant("")),
  );
  queueMicrotask(() => events.forEach((event) => stream.push(event)));
  return stream;
}

/** A stream function answering each call with "Processed <n>". */
function countingStreamFn() {
  const calls = { count: 0 };
  const streamFn = () => {
    calls.count += 1;
    return streamOf([{ type: "done", reason: "stop", message: assistant(`Processed ${calls.count}`) }]);
  };
  return { calls, streamFn };
}

describe.each(engines)("Agent (%s)", (_name, AgentOf) => {
  it("continue() processes a queued follow-up after an assistant turn", async () => {
    const agent = new AgentOf({ streamFn: countingStreamFn().streamFn });
    agent.state.messages = [user("Initial"), assistant("Initial response")];
    agent.followUp(user("Queued follow-up"));
    await expect(agent.continue()).resolves.toBeUndefined();
    expect(agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("continue() from an assistant tail keeps one-at-a-time steering: one message per model call", async () => {
    const { calls, streamFn } = countingStreamFn();
    const agent = new AgentOf({ streamFn });
    agent.state.messages = [user("Initial"), assistant("Initial response")];
    agent.steer(user("Steering 1"));
    agent.steer(user("Steering 2"));
    await agent.continue();
    expect(agent.state.messages.slice(-4).map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(calls.count).toBe(2);
  });

  it("prompt() resolves only after an async agent_end listener finished; listeners get the run's signal", async () => {
    const agent = new AgentOf({ streamFn: countingStreamFn().streamFn });
    const seen: string[] = [];
    agent.subscribe(async (event, signal) => {
      if (event.type !== "agent_end") return;
      expect(signal).toBe(agent.signal);
      await new Promise<void>((resolve) => setImmediate(resolve));
      seen.push("agent_end listener done");
    });
    await agent.prompt("Hello");
    seen.push("prompt resolved");
    expect(seen).toEqual(["agent_end listener done", "prompt resolved"]);
    expect(agent.state.isStreaming).toBe(false);
  });

  it("message_end hands over the very object that state.messages holds, and the final answer is there when prompt() resolves", async () => {
    const agent = new AgentOf({ streamFn: countingStreamFn().streamFn });
    const ended: unknown[] = [];
    agent.subscribe((event) => {
      if (event.type === "message_end") ended.push(event.message);
    });
    await agent.prompt(user("Hello"));
    expect(ended).toHaveLength(2);
    ended.forEach((message, index) => expect(agent.state.messages[index]).toBe(message));
    expect(agent.state.messages[1]).toMatchObject({ role: "assistant", content: [{ type: "text", text: "Processed 1" }] });
  });

  it("a streamFn that rejects (failed auth) ends as an assistant message with stopReason error", async () => {
    const agent = new AgentOf({ streamFn: () => Promise.reject(new Error("No API key for provider: openai")) });
    await agent.prompt("Hello");
    const last = agent.state.messages[agent.state.messages.length - 1];
    expect(last).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "No API key for provider: openai" });
    expect(agent.state.errorMessage).toBe("No API key for provider: openai");
  });

  it("abort() ends the run with an aborted assistant message, then the agent is idle", async () => {
    let calls = 0;
    const agent = new AgentOf({
      // The first call streams until aborted; the next answers.
      streamFn: (_model, _context, options) => {
        calls += 1;
        if (calls > 1) return streamOf([{ type: "done", reason: "stop", message: assistant("Back") }]);
        const stream = streamOf([{ type: "start", partial: assistant("") }]);
        options?.signal?.addEventListener("abort", () => stream.push({ type: "error", reason: "aborted", error: assistant("", "aborted") }));
        return stream;
      },
    });
    const started = new Promise<void>((resolve) => agent.subscribe((event) => (event.type === "message_start" && event.message.role === "assistant" ? resolve() : undefined)));
    const run = agent.prompt("Hello");
    await started;
    agent.abort();
    await run;
    expect(agent.state.messages.map((message) => (message.role === "assistant" ? `assistant:${message.stopReason}` : message.role))).toEqual(["user", "assistant:aborted"]);
    expect(agent.state.isStreaming).toBe(false);
    await agent.prompt("Again");
    expect(agent.state.messages).toHaveLength(4);
  });

  it("an unsubscribed listener hears nothing more; the queues clear apart", async () => {
    const agent = new AgentOf({ streamFn: countingStreamFn().streamFn });
    let heard = 0;
    const unsubscribe = agent.subscribe(() => {
      heard += 1;
    });
    unsubscribe();
    await agent.prompt("Hello");
    expect(heard).toBe(0);
    agent.steer(user("s"));
    agent.followUp(user("f"));
    agent.clearSteeringQueue();
    expect(agent.hasQueuedMessages()).toBe(true);
    agent.clearFollowUpQueue();
    expect(agent.hasQueuedMessages()).toBe(false);
  });
});
