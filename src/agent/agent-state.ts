import { emptyUsage, isAssistantMessage, isFailedMessage, roleOf } from "../types/messages.js";
import type { AgentEvent, AgentMessage, AgentState, Usage } from "../types.js";
import { addUsage as addUsageTo, spentBy } from "../model/run-usage.js";
import { withNestedApproval, withoutNestedApprovalsOf } from "./nested-approvals.js";
import { hasSharedIds, type Ids, idsOf, withId, withoutId, withState } from "./shared-ids.js";

/**
 * The id and approval lists of a state with none. Shared: an idle agent kept three empty arrays of
 * its own, about 100 bytes (bench W5, heap per idle agent). Frozen, as the state is read-only.
 */
const none: readonly never[] = Object.freeze([]);

/** No change but the id lists'. */
const unchanged: Partial<AgentState> = Object.freeze({});

/** The state of an agent that has not run, on its own copy of `messages` (it grows in place). */
export function initialAgentState(messages: readonly AgentMessage[]): AgentState {
  return {
    messages: [...messages],
    isStreaming: false,
    pendingToolCalls: none,
    waitingToolCalls: none,
    pendingApprovals: none,
    queuedSteering: 0,
    queuedFollowUp: 0,
    usage: messages.reduce((total, message) => addUsage(total, message), emptyUsage()),
  };
}

/**
 * The state after one event. Returns the same object when the event changes nothing; otherwise a
 * new state object.
 *
 * Contract: reduce each state once, in order (as `scan` does). The transcript is the one array
 * that is not copied: a message that ends is appended to `state.messages` in place, and every
 * state of the chain shares that array. Why: copying it per message made a long session slower
 * every turn (10,000 turns: 0.3 ms per turn at first, 4.8 ms at the end); appending keeps the
 * cost of a turn flat. To branch, start from `initialAgentState(state.messages)`, which copies.
 * The lists of tool call ids are shared between states once long (shared-ids.ts): they read as
 * plain arrays that never change.
 */
export function reduceAgentState(state: AgentState, event: AgentEvent): AgentState {
  switch (event.type) {
    case "agent_start": {
      const next = withState(state, { isStreaming: true, pendingToolCalls: none, waitingToolCalls: none, pendingApprovals: none });
      delete next.errorMessage;
      delete next.streamingMessage;
      return next;
    }
    case "message_start":
    case "message_update":
      if (!isAssistantMessage(event.message)) return state;
      // Every delta comes here: one spread when no list is shared.
      return hasSharedIds(state) ? withState(state, { streamingMessage: event.message }) : { ...state, streamingMessage: event.message };
    case "message_end": {
      (state.messages as AgentMessage[]).push(event.message);
      const next = withState(state, { usage: addUsage(state.usage, event.message) });
      if (isAssistantMessage(event.message)) {
        delete next.streamingMessage;
        if (isFailedMessage(event.message)) {
          next.errorMessage = event.message.errorMessage ?? event.message.stopReason;
        }
      }
      return next;
    }
    case "tool_execution_start":
      return withState(state, unchanged, { pendingToolCalls: withId(idsOf(state, "pendingToolCalls"), event.toolCallId) });
    case "tool_execution_end": {
      const lists: Partial<Record<"pendingToolCalls" | "waitingToolCalls", Ids>> = { pendingToolCalls: withoutId(idsOf(state, "pendingToolCalls"), event.toolCallId) };
      // A call cancelled while it waited for a slot ends here, without tool_slot_wait_end.
      const waiting = idsOf(state, "waitingToolCalls");
      if (waiting.length > 0) lists.waitingToolCalls = withoutId(waiting, event.toolCallId);
      return withoutNestedApprovalsOf(withState(state, unchanged, lists), event.toolCallId);
    }
    case "tool_execution_update":
      return withNestedApproval(state, event);
    // A call waiting for a concurrency slot is not running either: it moves to `waitingToolCalls` until it starts.
    case "tool_slot_wait_start":
      return withState(state, unchanged, {
        pendingToolCalls: withoutId(idsOf(state, "pendingToolCalls"), event.toolCallId),
        waitingToolCalls: withId(idsOf(state, "waitingToolCalls"), event.toolCallId),
      });
    case "tool_slot_wait_end":
      return withState(state, unchanged, {
        pendingToolCalls: withId(idsOf(state, "pendingToolCalls"), event.toolCallId),
        waitingToolCalls: withoutId(idsOf(state, "waitingToolCalls"), event.toolCallId),
      });
    // A call waiting for approval is not running: it leaves `pendingToolCalls` until approved.
    case "tool_approval_start": {
      const { toolCallId, toolName, args, since } = event;
      return withState(
        state,
        { pendingApprovals: [...state.pendingApprovals, { toolCallId, toolName, args, since }] },
        { pendingToolCalls: withoutId(idsOf(state, "pendingToolCalls"), toolCallId) },
      );
    }
    case "tool_approval_end":
      return withState(
        state,
        { pendingApprovals: state.pendingApprovals.filter((pending) => pending.toolCallId !== event.toolCallId) },
        event.approved ? { pendingToolCalls: withId(idsOf(state, "pendingToolCalls"), event.toolCallId) } : undefined,
      );
    case "agent_end": {
      const next = withState(state, { isStreaming: false, pendingToolCalls: none, waitingToolCalls: none, pendingApprovals: none });
      delete next.streamingMessage;
      // A run that failed outside any assistant message (a hook or a queue of the caller's).
      if (event.errorMessage !== undefined) next.errorMessage = event.errorMessage;
      return next;
    }
    default:
      return state;
  }
}

/** Adds what an assistant message (with the calls that failed before it) or a tool that reported its own `usage` spent. */
function addUsage(total: Usage, message: AgentMessage): Usage {
  const assistant = isAssistantMessage(message);
  if (!assistant && roleOf(message) !== "toolResult") return total;
  // A new object: the state is read-only, and a listener may keep the previous one.
  const next = emptyUsage();
  addUsageTo(next, total);
  addUsageTo(next, assistant ? spentBy(message) : (message as { usage?: unknown }).usage);
  return next;
}
