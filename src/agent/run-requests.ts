import { InvalidStateError } from "../errors.js";
import { isAssistantMessage, isFailedMessage, toolCallsOf } from "../types/messages.js";
import type { AgentState, ApprovalDecision } from "../types.js";
import type { ActiveRun } from "./active-run.js";

/**
 * Passes `Agent.cancelToolCall`'s cancel to the active run. Checked against the agent's state
 * first: the run would ignore an id not its own, so a wrong id is the caller's error, at once.
 *
 * Contract: throws an `InvalidStateError` unless `toolCallId` is an unfinished call of `run`
 * itself (a sub-agent's call waiting for approval is denied, or its parent call cancelled).
 */
export function requestCancel(run: Pick<ActiveRun<unknown>, "cancellations" | "lastStartedToolCall"> | undefined, state: AgentState, toolCallId: string, reason: string | undefined): void {
  // The run's cancels do not reach a sub-agent's calls (agentTool): the wait would go on unanswered.
  const parent = state.pendingApprovals.find((pending) => pending.toolCallId === toolCallId)?.parentToolCallId;
  if (parent !== undefined) {
    throw new InvalidStateError(
      `Cannot cancel tool call "${toolCallId}": it is a call of the sub-agent that tool call "${parent}" runs, waiting for approval. Deny it (deny("${toolCallId}")), or cancel "${parent}" to stop the sub-agent.`,
    );
  }
  if (!run || !isUnfinishedToolCall(state, run, toolCallId)) {
    throw new InvalidStateError(`Cannot cancel tool call "${String(toolCallId)}": no unfinished tool call of the running agent has that id.`);
  }
  run.cancellations.next(reason === undefined ? { toolCallId } : { toolCallId, reason });
}

/**
 * Passes `Agent.approve`'s or `Agent.deny`'s decision (`action`) to the active run, checked as
 * `requestCancel` is.
 *
 * Contract: throws an `InvalidStateError` unless the call waits for approval now.
 */
export function requestDecision(run: Pick<ActiveRun<unknown>, "approvals"> | undefined, state: AgentState, decision: ApprovalDecision, action: "approve" | "deny"): void {
  if (!run || !isAwaitingApproval(state, decision.toolCallId)) {
    throw new InvalidStateError(`Cannot ${action} tool call "${String(decision.toolCallId)}": it is not waiting for approval.`);
  }
  run.approvals.next(decision);
}

/** Running or waiting (started, not ended), or a call of the current assistant message not started yet. */
function isUnfinishedToolCall(state: AgentState, run: Pick<ActiveRun<unknown>, "lastStartedToolCall">, toolCallId: string): boolean {
  if (state.pendingToolCalls.includes(toolCallId) || isAwaitingApproval(state, toolCallId)) return true;
  const { messages } = state;
  let index = messages.length - 1;
  while (index >= 0 && !isAssistantMessage(messages[index]!)) index--;
  const assistant = messages[index];
  if (assistant === undefined || !isAssistantMessage(assistant) || isFailedMessage(assistant) || assistant.stopReason === "length") return false;
  const calls = toolCallsOf(assistant);
  const started = run.lastStartedToolCall === undefined ? -1 : calls.findIndex((call) => call.id === run.lastStartedToolCall);
  return calls.findIndex((call) => call.id === toolCallId) > started;
}

/** Waits for approval now (in `state.pendingApprovals`). */
function isAwaitingApproval(state: AgentState, toolCallId: string): boolean {
  return state.pendingApprovals.some((pending) => pending.toolCallId === toolCallId);
}
