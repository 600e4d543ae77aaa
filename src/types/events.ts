import type { AgentMessage, AssistantMessage, ToolResultMessage, Usage } from "./messages.js";
import type { ModelEvent } from "./model.js";
import type { AgentToolResult } from "./tools.js";

/** Messages still queued when a run ended, so the caller can keep them. */
export interface QueuedMessages {
  steering: AgentMessage[];
  followUp: AgentMessage[];
}

/**
 * Why a run ended, as `agent_end.reason`, for logs:
 * - `"failed"`: the model call failed, or a hook or a queue of the caller's failed (`agent_end.errorMessage` says how);
 * - `"aborted"`: the signal aborted, or the model stopped with `"aborted"`;
 * - `"max_turns"`: the run reached `maxTurns`;
 * - `"stop_condition"`: a `stopWhen` condition held (`agent_end.stopCondition` names it);
 * - `"stopped_by_hook"`: `shouldStopAfterTurn` said so;
 * - `"terminated"`: every tool result of the last batch asked to terminate, and nothing was queued;
 * - `"idle"`: the model answered without tool calls, and nothing was queued.
 */
export type AgentEndReason = "failed" | "aborted" | "max_turns" | "stop_condition" | "stopped_by_hook" | "terminated" | "idle";

/**
 * Everything a run reports, in order. Same shapes as pi-agent-core's `AgentEvent`:
 *
 * ```text
 * agent_start
 * └─ turn_start
 *    ├─ message_start / message_end          (prompt, steering, follow-up)
 *    ├─ message_start, message_update…, message_end   (assistant)
 *    ├─ tool_execution_start, _update…, _end (per tool call)
 *    ├─ message_start / message_end          (tool results, in call order)
 *    └─ turn_end
 * agent_end
 * ```
 *
 * `TDetails` types the tool results' `details` (default `unknown`), e.g. `AgentEvent<MyDetails>`
 * when every tool shares one details shape; `TOutput` types `agent_end.output` (structured output).
 */
export type AgentEvent<TDetails = unknown, TOutput = unknown> =
  | { type: "agent_start" }
  | {
      type: "agent_end";
      /** Every message the run added, in order (prompts included). */
      messages: AgentMessage[];
      /** Present when steering or follow-up messages were still queued at the end. */
      queued?: QueuedMessages;
      /** With `output` configured: the validated final answer, or `outputError` saying why there is none. */
      output?: TOutput;
      outputError?: string;
      /** Why the run ended. An addition to pi-agent-core's shape: optional, and ignored by its UIs. */
      reason?: AgentEndReason;
      /** With reason `"stop_condition"`: the `stopWhen` condition that held, e.g. `"hasToolCall(answer)"`. */
      stopCondition?: string;
      /** With reason `"failed"` when no failed assistant message tells why: what failed. */
      errorMessage?: string;
      /**
       * The run's tokens and cost summed over `messages` (`runUsage`): every assistant message,
       * failed ones and a fallback's too, and every tool result that reported `usage`. Always set by
       * the loop; absent from an `agent_end` made elsewhere (a Redis takeover's, an older server's).
       * An addition to pi-agent-core's shape: optional, and ignored by its UIs.
       */
      usage?: Usage;
    }
  | { type: "turn_start" }
  | { type: "turn_end"; message: AssistantMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AssistantMessage; assistantMessageEvent: ModelEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: unknown }
  | {
      type: "tool_execution_update";
      toolCallId: string;
      toolName: string;
      args: unknown;
      /** The result so far, as the tool reported it. */
      partialResult: AgentToolResult<TDetails>;
    }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      result: AgentToolResult<TDetails>;
      isError: boolean;
    }
  /**
   * A call whose tool `needsApproval` waits for `approve` / `deny` (between its
   * `tool_execution_start` and its run); `since` is the scheduler's time. An addition to
   * pi-agent-core's events: UIs written for the reference ignore it.
   */
  | { type: "tool_approval_start"; toolCallId: string; toolName: string; args: unknown; since: number }
  /** The call's approval ended: approved (it runs now), or denied / timed out / aborted / cancelled, with why. */
  | { type: "tool_approval_end"; toolCallId: string; toolName: string; approved: boolean; reason?: string }
  /**
   * A call ready to run waits for a concurrency slot (`maxConcurrency`, or its tool's
   * `concurrency`); `since` is the scheduler's time. Only a call that cannot start at once gets
   * it. An addition to pi-agent-core's events: UIs written for the reference ignore it.
   */
  | { type: "tool_slot_wait_start"; toolCallId: string; toolName: string; since: number }
  /** The call got its slot and runs now. A call settled while it waits (a cancel) ends with `tool_execution_end` instead. */
  | { type: "tool_slot_wait_end"; toolCallId: string; toolName: string };

/** The `type` names of `AgentEvent`. */
export type AgentEventType = AgentEvent["type"];
