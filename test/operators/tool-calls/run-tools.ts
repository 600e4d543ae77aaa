/** Runs one tool turn through the whole loop and checks the one-result-per-call invariant. */
import { lastValueFrom, toArray } from "rxjs";
import { agentLoop } from "../../../src/streams/agent-loop.js";
import { scriptedModel, type ScriptedBlock } from "../../../src/testing/scripted-model.js";
import type { AgentEvent, AgentLoopConfig, AgentTool, ToolResultMessage } from "../../../src/types.js";
import { expectOneResultPerToolCall, userMessage } from "../../testing/fixtures.js";

export type ToolCallBlock = Extract<ScriptedBlock, { type: "toolCall" }>;

export interface ToolTurn {
  events: AgentEvent[];
  /** The toolResult messages, in emission order. */
  results: ToolResultMessage[];
  /** The text of each result message. */
  texts: string[];
  ends: Extract<AgentEvent, { type: "tool_execution_end" }>[];
  updates: Extract<AgentEvent, { type: "tool_execution_update" }>[];
  /** The tool calls as the model made them. */
  modelCalls: number;
}

export function call(name: string, args: Record<string, unknown>, id?: string): ToolCallBlock {
  return id === undefined ? { type: "toolCall", name, arguments: args } : { type: "toolCall", id, name, arguments: args };
}

function summarize(events: AgentEvent[], modelCalls: number): ToolTurn {
  expectOneResultPerToolCall(events);
  const results = events
    .filter((event): event is Extract<AgentEvent, { type: "message_end" }> => event.type === "message_end")
    .map((event) => event.message)
    .filter((message): message is ToolResultMessage => (message as { role?: string }).role === "toolResult");
  return {
    events,
    results,
    texts: results.map((result) => result.content.map((part) => (part.type === "text" ? part.text : "[image]")).join("")),
    ends: events.filter((event): event is Extract<AgentEvent, { type: "tool_execution_end" }> => event.type === "tool_execution_end"),
    updates: events.filter((event): event is Extract<AgentEvent, { type: "tool_execution_update" }> => event.type === "tool_execution_update"),
    modelCalls,
  };
}

function loopOf(tools: AgentTool[], calls: ToolCallBlock[], config: Partial<AgentLoopConfig>) {
  const model = scriptedModel([{ content: calls }, "done"]);
  return { model, events$: agentLoop([userMessage("go")], { messages: [], tools }, { model, ...config }) };
}

/** Synchronous tools only: the whole run happens inside `subscribe`. */
export function runToolTurn(tools: AgentTool[], calls: ToolCallBlock[], config: Partial<AgentLoopConfig> = {}): ToolTurn {
  const { model, events$ } = loopOf(tools, calls, config);
  const events: AgentEvent[] = [];
  let completed = false;
  events$.subscribe({ next: (event) => events.push(event), complete: () => (completed = true) });
  if (!completed) throw new Error("runToolTurn: the run did not complete synchronously");
  return summarize(events, model.calls.length);
}

/** For Promise-based tools and hooks. */
export async function runToolTurnAsync(tools: AgentTool[], calls: ToolCallBlock[], config: Partial<AgentLoopConfig> = {}): Promise<ToolTurn> {
  const { model, events$ } = loopOf(tools, calls, config);
  const events = await lastValueFrom(events$.pipe(toArray()));
  return summarize(events, model.calls.length);
}
