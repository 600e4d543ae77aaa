import { describe, expect, it } from "vitest";
import { Type } from "@sinclair/typebox";
import { asyncScheduler, distinctUntilChanged, lastValueFrom, map, timer, toArray } from "rxjs";
import type { TestScheduler } from "rxjs/testing";
import { Agent, defineTool, InvalidConfigError, InvalidStateError, textResult } from "../../src/index.js";
import type { AgentEvent, AgentMessage, AgentState } from "../../src/index.js";
import type { SchedulerLike } from "rxjs";
import { assertEventGrammar, scriptedModel, type ScriptedTurn } from "../../src/testing/index.js";
import { marbles } from "../helpers/marbles.js";

function slowTool(scheduler: SchedulerLike, latency: number) {
  return defineTool({
    name: "slow",
    description: "Takes a while",
    parameters: Type.Object({ label: Type.String() }),
    execute: (_id, { label }) => timer(latency, scheduler).pipe(map(() => textResult(`done ${label}`))),
  });
}

const toolTurn: ScriptedTurn = { content: [{ type: "toolCall", id: "call-a", name: "slow", arguments: { label: "a" } }] };

/** Records each event with the virtual frame it was emitted at. */
function timeline(agent: Agent, scheduler: TestScheduler): string[] {
  const entries: string[] = [];
  agent.events$.subscribe((event) => entries.push(`${scheduler.now()} ${describeEvent(event)}`));
  return entries;
}

function describeEvent(event: AgentEvent): string {
  if (event.type === "message_start" || event.type === "message_end") {
    const message = event.message as { role: string; content: unknown };
    const text = typeof message.content === "string" ? `:${message.content}` : "";
    return `${event.type} ${message.role}${text}`;
  }
  if (event.type === "message_update") return "message_update";
  return event.type;
}

function roles(messages: readonly AgentMessage[]): string[] {
  return messages.map((message) => {
    const { role, content } = message as { role: string; content: unknown };
    return typeof content === "string" ? `${role}:${content}` : role;
  });
}

describe("Agent", () => {
  it(
    "lands a message steered during a tool batch in the next turn, at the batch's end",
    marbles((m) => {
      const model = scriptedModel([toolTurn, (context) => `saw ${context.messages.length}`], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, tools: [slowTool(m.scheduler, 4)], scheduler: m.scheduler });
      const entries = timeline(agent, m.scheduler);
      agent.prompt("go");
      m.scheduler.schedule(() => agent.steer("faster please"), 7);
      m.flush();
      // Model: start 1, toolcall_start 2, delta 3, end 4, done 5; the tool runs 5..9 and its
      // Observable's one value completes it, so it is the result, not progress.
      expect(entries).toStrictEqual([
        "0 agent_start",
        "0 turn_start",
        "0 message_start user:go",
        "0 message_end user:go",
        "1 message_start assistant",
        "2 message_update",
        "3 message_update",
        "4 message_update",
        "5 message_end assistant",
        "5 tool_execution_start",
        "9 tool_execution_end",
        "9 message_start toolResult",
        "9 message_end toolResult",
        "9 turn_end",
        "9 turn_start",
        "9 message_start user:faster please",
        "9 message_end user:faster please",
        "10 message_start assistant",
        "11 message_update",
        "12 message_update",
        "13 message_update",
        "14 message_update",
        "15 message_end assistant",
        "15 turn_end",
        "15 agent_end",
      ]);
      expect(roles(agent.messages)).toStrictEqual(["user:go", "assistant", "toolResult", "user:faster please", "assistant"]);
      expect(model.calls[1]?.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "user"]);
    }),
  );

  it(
    "handles follow-ups only once the run would stop, one at a time by default",
    marbles((m) => {
      const model = scriptedModel(["first", "second", "third"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, scheduler: m.scheduler });
      agent.prompt("hello");
      m.scheduler.schedule(() => {
        agent.followUp("later one");
        agent.followUp("later two");
      }, 1);
      m.flush();
      expect(roles(agent.messages)).toStrictEqual([
        "user:hello",
        "assistant",
        "user:later one",
        "assistant",
        "user:later two",
        "assistant",
      ]);
      expect(agent.state.isStreaming).toBe(false);
      expect(agent.state.queuedFollowUp).toBe(0);
    }),
  );

  it(
    "drains every queued message at once in mode all",
    marbles((m) => {
      const model = scriptedModel(["first", "second"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, scheduler: m.scheduler });
      agent.followUpMode = "all";
      agent.prompt("hello");
      m.scheduler.schedule(() => {
        agent.followUp("one");
        agent.followUp("two");
      }, 1);
      m.flush();
      expect(roles(agent.messages)).toStrictEqual(["user:hello", "assistant", "user:one", "user:two", "assistant"]);
    }),
  );

  it(
    "refuses prompt while busy and points to steer and followUp",
    marbles((m) => {
      const agent = new Agent({ model: scriptedModel(["a"], { scheduler: m.scheduler, delay: 1 }), scheduler: m.scheduler });
      agent.prompt("one");
      expect(() => agent.prompt("two")).toThrow(InvalidStateError);
      expect(() => agent.prompt("two")).toThrow(/steer\(\).*followUp\(\)/);
      // pi-agent-core's sentences first, so code that matches on them works here too.
      expect(() => agent.prompt("two")).toThrow(/^Agent is already processing a prompt\. Use steer\(\) or followUp\(\) to queue messages, or wait for completion\. /);
      expect(() => agent.continue()).toThrow(InvalidStateError);
      expect(() => agent.continue()).toThrow(/^Agent is already processing\. Wait for completion before continuing\. .*steer\(\).*followUp\(\)/);
      m.flush();
      expect(agent.isRunning).toBe(false);
    }),
  );

  it(
    "publishes isStreaming, streamingMessage and pendingToolCalls at exact virtual times",
    marbles((m) => {
      const model = scriptedModel([toolTurn, "ok"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, tools: [slowTool(m.scheduler, 4)], scheduler: m.scheduler });
      const seen: string[] = [];
      agent.state$.pipe(distinctUntilChanged()).subscribe((state: AgentState) => {
        const streaming = state.streamingMessage ? `partial(${state.streamingMessage.content.length})` : "-";
        const entry = `${m.scheduler.now()} ${state.isStreaming ? "busy" : "idle"} ${streaming} [${state.pendingToolCalls.join(",")}] ${state.messages.length}`;
        seen.push(entry);
      });
      agent.prompt("go");
      m.flush();
      expect(seen).toStrictEqual([
        "0 idle - [] 0",
        "0 busy - [] 0",
        "0 busy - [] 1",
        "1 busy partial(0) [] 1",
        "2 busy partial(1) [] 1",
        "3 busy partial(1) [] 1",
        "4 busy partial(1) [] 1",
        "5 busy - [] 2",
        "5 busy - [call-a] 2",
        "9 busy - [] 2",
        "9 busy - [] 3",
        "10 busy partial(0) [] 3",
        "11 busy partial(1) [] 3",
        "12 busy partial(1) [] 3",
        "13 busy partial(1) [] 3",
        "14 busy - [] 4",
        "14 idle - [] 4",
      ]);
    }),
  );

  it(
    "aborts while streaming: the message ends aborted, steering is dropped, follow-ups stay",
    marbles((m) => {
      const model = scriptedModel(["a long answer that streams slowly"], { scheduler: m.scheduler, delay: 2 });
      const agent = new Agent({ model, scheduler: m.scheduler });
      const events: AgentEvent[] = [];
      agent.prompt("go").subscribe((event) => events.push(event));
      m.scheduler.schedule(() => {
        agent.steer("dropped");
        agent.followUp("kept");
        agent.abort();
      }, 5);
      m.flush();
      assertEventGrammar(events);
      const last = agent.messages[agent.messages.length - 1] as { stopReason: string; errorMessage: string };
      expect(last.stopReason).toBe("aborted");
      expect(agent.state.errorMessage).toBe("Request was aborted");
      expect(agent.state.queuedSteering).toBe(0);
      expect(agent.state.queuedFollowUp).toBe(1);
      expect(events.map((event) => event.type).slice(-3)).toStrictEqual(["message_end", "turn_end", "agent_end"]);
      expect(agent.isRunning).toBe(false);
    }),
  );

  it(
    "aborts while tools run: every call gets an error result, then agent_end",
    marbles((m) => {
      const model = scriptedModel(
        [{ content: [
          { type: "toolCall", id: "call-a", name: "slow", arguments: { label: "a" } },
          { type: "toolCall", id: "call-b", name: "slow", arguments: { label: "b" } },
        ] }],
        { scheduler: m.scheduler, delay: 1 },
      );
      const agent = new Agent({ model, tools: [slowTool(m.scheduler, 10)], scheduler: m.scheduler });
      const events: AgentEvent[] = [];
      agent.prompt("go").subscribe((event) => events.push(event));
      m.scheduler.schedule(() => agent.abort(), 9);
      m.flush();
      assertEventGrammar(events);
      const results = agent.messages.filter((message) => (message as { role: string }).role === "toolResult") as {
        toolCallId: string;
        isError: boolean;
        content: { text: string }[];
      }[];
      expect(results.map((result) => [result.toolCallId, result.isError, result.content[0]?.text])).toStrictEqual([
        ["call-a", true, "Tool execution was aborted."],
        ["call-b", true, "Tool execution was aborted."],
      ]);
      expect(events[events.length - 1]?.type).toBe("agent_end");
      expect(model.calls).toHaveLength(1);
    }),
  );

  it(
    "returns hot run events that a late subscriber still sees from the start",
    marbles((m) => {
      const agent = new Agent({ model: scriptedModel(["hi"]), scheduler: m.scheduler });
      const run = agent.prompt("hello");
      expect(agent.isRunning).toBe(false);
      const types: string[] = [];
      run.subscribe((event) => types.push(event.type));
      expect(types[0]).toBe("agent_start");
      expect(types[types.length - 1]).toBe("agent_end");
    }),
  );

  it("lets an agent_end listener prompt again at once", async () => {
    const agent = new Agent({ model: scriptedModel(["one", "two"]) });
    const second: AgentEvent[] = [];
    let prompted = false;
    agent.events$.subscribe((event) => {
      if (event.type === "agent_end" && !prompted) {
        prompted = true;
        agent.prompt("again").subscribe((next) => second.push(next));
      }
    });
    agent.prompt("first");
    await agent.waitForIdle();
    assertEventGrammar(second);
    expect(roles(agent.messages)).toStrictEqual(["user:first", "assistant", "user:again", "assistant"]);
  });

  it("iterates a run with for await", async () => {
    const agent = new Agent({ model: scriptedModel(["hi there"]) });
    const types: string[] = [];
    const { toAsyncIterable } = await import("../../src/index.js");
    for await (const event of toAsyncIterable(agent.prompt("hello"))) types.push(event.type);
    expect(types).toStrictEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_update",
      "message_update",
      "message_update",
      "message_update",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
  });

  it("sums usage over the session", async () => {
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "text", text: "a" }], usage: { input: 10, output: 3 } }, { content: [{ type: "text", text: "b" }], usage: { input: 20, output: 4 } }]) });
    await lastValueFrom(agent.prompt("one").pipe(toArray()));
    await lastValueFrom(agent.prompt("two").pipe(toArray()));
    expect([agent.state.usage.input, agent.state.usage.output, agent.state.usage.totalTokens]).toStrictEqual([30, 7, 37]);
  });

  describe("Subjects made on first use", () => {
    it("replays the current state to a state$ first asked for after a run", async () => {
      const agent = new Agent({ model: scriptedModel(["a"]) });
      await lastValueFrom(agent.prompt("one").pipe(toArray()));
      const states: AgentState[] = [];
      agent.state$.subscribe((state) => states.push(state));
      expect(states).toStrictEqual([agent.state]);
      expect(roles(states[0]!.messages)).toStrictEqual(["user:one", "assistant"]);
    });

    it("passes messages pushed to the steering and followUps Subjects to the run, like steer() and followUp()", async () => {
      const agent = new Agent({ model: scriptedModel(["a", "b", "c"]) });
      agent.followUps.next({ role: "user", content: "pushed", timestamp: 0 });
      agent.followUp("called");
      const heard: AgentMessage[] = [];
      agent.steering.subscribe((message) => heard.push(message));
      agent.steer("steered");
      expect(heard.map((message) => (message as { content: unknown }).content)).toStrictEqual(["steered"]);
      await lastValueFrom(agent.prompt("one").pipe(toArray()));
      expect(roles(agent.messages)).toStrictEqual(["user:one", "user:steered", "assistant", "user:pushed", "assistant", "user:called", "assistant"]);
    });

    it("completes events$ and state$ asked for after dispose at once", () => {
      const agent = new Agent({ model: scriptedModel(["a"]) });
      agent.dispose();
      const completed: string[] = [];
      agent.events$.subscribe({ complete: () => completed.push("events$") });
      agent.state$.subscribe({ complete: () => completed.push("state$") });
      expect(completed).toStrictEqual(["events$", "state$"]);
    });

    // Found by a random run of the Agent's methods: both rejected with rxjs's "no elements in sequence".
    it("resolves waitForIdle once disposed: one asked after dispose, and one waiting for a run that dispose stopped", async () => {
      const running = new Agent({ model: scriptedModel(["never ends"], { scheduler: asyncScheduler, delay: 60_000 }) });
      running.prompt("go").subscribe({ error: () => undefined });
      const waiting = running.waitForIdle();
      running.dispose();
      await expect(waiting).resolves.toBeUndefined();
      await expect(running.waitForIdle()).resolves.toBeUndefined();
    });
  });

  it(
    "drains steering in the mode given to the constructor, and in the one set by configure",
    marbles((m) => {
      const model = scriptedModel(["first", "second", "third"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, scheduler: m.scheduler, steeringMode: "all" });
      expect(agent.steeringMode).toBe("all");
      agent.prompt("hello");
      m.scheduler.schedule(() => {
        agent.steer("one");
        agent.steer("two");
      }, 1);
      m.flush();
      // Both steered messages land together in the second turn ("one-at-a-time" would take two).
      expect(roles(agent.messages)).toStrictEqual(["user:hello", "assistant", "user:one", "user:two", "assistant"]);
      agent.configure({ followUpMode: "all" });
      expect(agent.followUpMode).toBe("all");
    }),
  );

  // Found by a random run of the Agent's methods: configure(undefined) threw "Cannot read
  // properties of undefined (reading 'steeringMode')", and configure("c0") took "c" and "0" as settings.
  it("refuses a configure that is not given an object, naming it, and keeps its settings", () => {
    const agent = new Agent({ model: scriptedModel(["a"]), systemPrompt: "Be brief." });
    for (const [options, got] of [[undefined, "missing"], ["c0", "a string"], [[], "an array"]] as const) {
      expect(() => agent.configure(options as never)).toThrow(new InvalidConfigError("options", `Agent.configure takes an object such as { model, tools, systemPrompt }, got ${got}.`));
    }
    expect(agent.settings).toMatchObject({ systemPrompt: "Be brief." });
    expect(Object.keys(agent.settings)).not.toContain("0");
  });

  it("wakes state$ listeners only when the state changes", async () => {
    const agent = new Agent({ model: scriptedModel(["a"]) });
    const wakes: string[] = [];
    agent.state$.subscribe(() => wakes.push("state"));
    agent.events$.subscribe((event) => wakes.push(event.type));
    await lastValueFrom(agent.prompt("one").pipe(toArray()));
    // An event's state comes just before it. turn_start, the prompt's message_start and turn_end
    // change nothing the state holds, so no state comes before them: a reducer (or a publisher)
    // that hands out a fresh, equal state for them adds a wake-up here.
    expect(wakes).toStrictEqual([
      "state", // the state on subscribing
      "state", "agent_start",
      "turn_start",
      "message_start",
      "state", "message_end",
      "state", "message_start",
      "state", "message_update",
      "state", "message_update",
      "state", "message_update",
      "state", "message_end",
      "turn_end",
      "state", "agent_end",
    ]);
  });

});
