import { innermostEventOf } from "../types/sub-agent.js";
import type { AgentEvent, AgentState } from "../types.js";
import { withState } from "./shared-ids.js";

/**
 * The state after a sub-agent's approval event (`agentTool`), which reaches the agent inside a
 * `tool_execution_update` of the parent's call: a nested call that waits for approval joins
 * `pendingApprovals`, marked with the parent's call, so `approve` / `deny` can answer it (the
 * nested run listens to the same decisions). Returns `state` itself for any other update.
 */
export function withNestedApproval(state: AgentState, update: Extract<AgentEvent, { type: "tool_execution_update" }>): AgentState {
  const nested = innermostEventOf(update);
  if (nested.type === "tool_approval_start") {
    const { toolCallId, toolName, args, since } = nested;
    return withState(state, { pendingApprovals: [...state.pendingApprovals, { toolCallId, toolName, args, since, parentToolCallId: update.toolCallId }] });
  }
  if (nested.type === "tool_approval_end") return withState(state, { pendingApprovals: state.pendingApprovals.filter((pending) => pending.toolCallId !== nested.toolCallId) });
  return state;
}

/** Drops the nested approvals of a parent's call that ended (cancelled, timed out, aborted): its sub-agent is gone. */
export function withoutNestedApprovalsOf(state: AgentState, parentToolCallId: string): AgentState {
  if (!state.pendingApprovals.some((pending) => pending.parentToolCallId === parentToolCallId)) return state;
  return withState(state, { pendingApprovals: state.pendingApprovals.filter((pending) => pending.parentToolCallId !== parentToolCallId) });
}
