import { describe, expect, it } from "vitest";
import { initialAgentState, reduceAgentState } from "../../src/agent/agent-state.js";
import type { AgentEvent, AgentState } from "../../src/types.js";
import { assistantMessage, text } from "../testing/fixtures.js";

type IdField = "pendingToolCalls" | "waitingToolCalls";

/** Ids copied into the state's own array (a data property); a shared list is an accessor and copies none until read. */
function copiedIds(state: AgentState): number {
  return (["pendingToolCalls", "waitingToolCalls"] as const).reduce((total, field) => {
    const descriptor = Object.getOwnPropertyDescriptor(state, field);
    return total + (Array.isArray(descriptor?.value) ? (descriptor.value as unknown[]).length : 0);
  }, 0);
}

const start = (toolCallId: string): AgentEvent => ({ type: "tool_execution_start", toolCallId, toolName: "t", args: {} });
const end = (toolCallId: string): AgentEvent => ({
  type: "tool_execution_end",
  toolCallId,
  toolName: "t",
  result: { content: [], details: undefined },
  isError: false,
});

/** The lists as the reducer kept them before sharing: a spread to add, a filter to remove. */
function plainLists(events: AgentEvent[]): Array<Record<IdField, string[]>> {
  let lists: Record<IdField, string[]> = { pendingToolCalls: [], waitingToolCalls: [] };
  return events.map((event) => {
    const { pendingToolCalls: pending, waitingToolCalls: waiting } = lists;
    const without = (ids: string[], id: string) => ids.filter((other) => other !== id);
    if (event.type === "tool_execution_start") lists = { ...lists, pendingToolCalls: [...pending, event.toolCallId] };
    if (event.type === "tool_execution_end") lists = { pendingToolCalls: without(pending, event.toolCallId), waitingToolCalls: without(waiting, event.toolCallId) };
    if (event.type === "tool_slot_wait_start") lists = { pendingToolCalls: without(pending, event.toolCallId), waitingToolCalls: [...waiting, event.toolCallId] };
    if (event.type === "tool_slot_wait_end") lists = { pendingToolCalls: [...pending, event.toolCallId], waitingToolCalls: without(waiting, event.toolCallId) };
    return lists;
  });
}

/** The states whose lists differ from the plain ones (deep equality of thousands of long lists takes seconds). */
function mismatches(states: AgentState[], expected: Array<Record<IdField, string[]>>): number[] {
  const same = (ids: readonly string[], other: readonly string[]) => ids.length === other.length && ids.every((id, index) => id === other[index]);
  const differing: number[] = [];
  states.forEach((state, index) => {
    const lists = expected[index] as Record<IdField, string[]>;
    if (!same(state.pendingToolCalls, lists.pendingToolCalls) || !same(state.waitingToolCalls, lists.waitingToolCalls)) differing.push(index);
  });
  if (states.length !== expected.length) differing.push(-1);
  return differing;
}

function reduceAll(events: AgentEvent[], from = reduceAgentState(initialAgentState([]), { type: "agent_start" })): AgentState[] {
  const states: AgentState[] = [];
  let state = from;
  for (const event of events) states.push((state = reduceAgentState(state, event)));
  return states;
}

describe("the id lists of AgentState", () => {
  it("share a long list between states: 1,500 calls started then ended copy no id past the 128th", () => {
    const ids = Array.from({ length: 1_500 }, (_unused, index) => `call_${index}`);
    const events = [...ids.map(start), ...ids.map(end)];
    const states = reduceAll(events);
    const copied = states.reduce((total, state) => total + copiedIds(state), 0);

    // Why: every state copied its list (a spread to add, a filter to remove): 2,250,000 ids here,
    // n² for n calls running at once (10,000 Promise tools: 100 million, on the agent and on every
    // client). A list of fewer than 128 ids is still a plain copy.
    expect(copied).toBe(2 * ((127 * 128) / 2));
    // Read after the whole run: each state kept its list.
    expect(mismatches(states, plainLists(events))).toStrictEqual([]);
  });

  it("read as they did: plain arrays, the same one on each read, in JSON, spreads and structuredClone", () => {
    const ids = Array.from({ length: 300 }, (_unused, index) => `call_${index}`);
    const states = reduceAll([...ids.map(start), { type: "message_start", message: assistantMessage([text("hi")]) }]);
    const state = states.at(-1) as AgentState;
    const before = reduceAgentState(initialAgentState([]), { type: "agent_start" });

    expect(Object.keys(state)).toStrictEqual([...Object.keys(before), "streamingMessage"]);
    expect(Array.isArray(state.pendingToolCalls)).toBe(true);
    expect(state.pendingToolCalls).toBe(state.pendingToolCalls);
    expect(state.pendingToolCalls).toStrictEqual(ids);
    expect(JSON.parse(JSON.stringify(state)).pendingToolCalls).toStrictEqual(ids);
    expect({ ...state }.pendingToolCalls).toStrictEqual(ids);
    expect(structuredClone(state).pendingToolCalls).toStrictEqual(ids);
    expect((states[200] as AgentState).pendingToolCalls).toStrictEqual(ids.slice(0, 201));
    // Assigning (the state is not frozen) replaces the list, for the reducer too.
    const assigned = { ...(states[250] as AgentState) };
    const shared = states[250] as AgentState & { pendingToolCalls: readonly string[] };
    shared.pendingToolCalls = ["only"];
    expect(shared.pendingToolCalls).toStrictEqual(["only"]);
    expect(reduceAgentState(shared, end("only")).pendingToolCalls).toStrictEqual([]);
    expect(assigned.pendingToolCalls).toStrictEqual(ids.slice(0, 251));
  });

  it("match plain arrays over calls that end out of order, wait for slots, repeat an id or come from a snapshot", () => {
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    const events: AgentEvent[] = [];
    const running: string[] = [];
    const waiting: string[] = [];
    for (let step = 0; step < 3_000; step++) {
      const roll = random(10);
      if (roll < 5 || running.length === 0) {
        // Late in the run, a repeated id now and then (a model's duplicate, or an id a later turn reuses).
        const id = step > 2_500 && random(20) === 0 ? (running[random(running.length)] as string) : `call_${step}`;
        running.push(id);
        events.push(start(id));
      } else if (roll < 7) {
        const id = running.splice(roll === 5 ? 0 : random(running.length), 1)[0] as string;
        events.push(end(id));
      } else if (roll < 8) {
        const id = running.pop() as string;
        waiting.push(id);
        events.push({ type: "tool_slot_wait_start", toolCallId: id, toolName: "t" } as AgentEvent);
      } else if (waiting.length > 0) {
        const id = waiting.shift() as string;
        running.push(id);
        events.push({ type: "tool_slot_wait_end", toolCallId: id, toolName: "t" } as AgentEvent);
      }
    }
    const states = reduceAll(events);
    expect(Math.max(...states.map((state) => state.pendingToolCalls.length))).toBeGreaterThan(300);
    expect(mismatches(states, plainLists(events))).toStrictEqual([]);
    // A client starts from a snapshot's state: plain arrays, however long.
    const middle = JSON.parse(JSON.stringify(states[1_500])) as AgentState;
    expect(mismatches(reduceAll(events.slice(1_501), middle), plainLists(events).slice(1_501))).toStrictEqual([]);
  });
});
