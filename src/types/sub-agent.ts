import type { AgentEndReason, AgentEvent } from "./events.js";

/**
 * One event of a sub-agent's run (`agentTool`), as the `details` of a `tool_execution_update` of
 * the call that runs it. A sub-agent's own sub-agents nest the same way: `event` is then itself a
 * `tool_execution_update` carrying a `SubAgentUpdate` one level deeper.
 *
 * ```text
 * tool_execution_update  toolCallId: "call_1", toolName: "researcher"
 * └─ partialResult.details: { type: "sub_agent_event", agent: "researcher", depth: 1, event: { type: "turn_start" } }
 * ```
 */
export interface SubAgentUpdate {
  type: "sub_agent_event";
  /** The agent tool's name. */
  agent: string;
  /** 1 for a sub-agent of the run's own tools, 2 for a sub-agent of that sub-agent, and so on. */
  depth: number;
  /** The sub-agent's event, as its own run emitted it (its `agent_end` becomes the call's result instead). */
  event: AgentEvent;
}

/** The `details` of an agent tool's result: why the sub-agent's run ended, and its structured output when it has an `output` schema. */
export interface SubAgentResult<TOutput = unknown> {
  type: "sub_agent_result";
  agent: string;
  reason: AgentEndReason | undefined;
  output?: TOutput;
}

/** The `details` an agent tool reports: `SubAgentUpdate`s while it works, a `SubAgentResult` at the end. */
export type SubAgentDetails<TOutput = unknown> = SubAgentUpdate | SubAgentResult<TOutput>;

/** The sub-agent event an event carries, when it is an agent tool's `tool_execution_update`. */
export function subAgentUpdateOf(event: AgentEvent): SubAgentUpdate | undefined {
  if (event.type !== "tool_execution_update") return undefined;
  const details = (event.partialResult as { details?: unknown } | undefined)?.details;
  if (typeof details !== "object" || details === null) return undefined;
  const update = details as Partial<SubAgentUpdate>;
  return update.type === "sub_agent_event" && typeof update.event === "object" && update.event !== null ? (update as SubAgentUpdate) : undefined;
}

/** The event at the bottom of a chain of sub-agent updates: `event` itself when it carries none. */
export function innermostEventOf(event: AgentEvent): AgentEvent {
  let current = event;
  for (let update = subAgentUpdateOf(current); update !== undefined; update = subAgentUpdateOf(current)) current = update.event;
  return current;
}
