import type { FinishReason, UIMessageChunk } from "ai";
import { concatMap, defer, type Observable, type OperatorFunction } from "rxjs";
import type { AgentEndReason, AgentEvent, AgentMessage, AgentToolResult, ModelEvent, ToolCall } from "../index.js";

type AgentEnd = Extract<AgentEvent, { type: "agent_end" }>;

/** How a run's events become the AI SDK's UI message chunks. */
export interface UIMessageChunkOptions {
  /**
   * The id of the one assistant `UIMessage` a run becomes (its `start` chunk).
   * Contract: unique per run; default a fresh `crypto.randomUUID()`.
   */
  messageId?: string;
  /**
   * What a tool call's `output` is in the UIMessage, from its result (also each preliminary
   * result while it runs). Default: the result as the tool returned it, `{ content, details }`.
   * @example toolOutput: (result) => result.details
   */
  toolOutput?: (result: AgentToolResult<unknown>, toolName: string) => unknown;
  /**
   * The assistant message's `metadata`, sent with the `finish` chunk. Default `{ reason, usage }`
   * of `agent_end`; return `undefined` to send none.
   */
  messageMetadata?: (end: AgentEnd) => unknown;
}

/**
 * Data parts rxagent adds to the UIMessage where the AI SDK 5 protocol has no part of its own.
 * `tool-approval`: a call that waits for `approve` / `deny` (updated in place, by tool call id).
 * `user-message`: a steering or follow-up message the run took in after its first turn.
 */
export type RxagentDataParts = {
  "tool-approval": { toolCallId: string; toolName: string; input: unknown; state: "waiting" | "approved" | "denied"; reason?: string };
  "user-message": { text: string };
};

/** What one run's chunk mapping remembers between events. */
interface ChunkState {
  turn: number;
  /** Text and reasoning parts started and not ended yet, closed when a message ends early (abort, error). */
  open: Map<string, "text" | "reasoning">;
  userMessages: number;
  /** The arguments of calls waiting for approval: an approval's data part is replaced whole at its end. */
  approvals: Map<string, unknown>;
}

const FINISH_REASONS: Record<AgentEndReason, FinishReason> = {
  idle: "stop",
  failed: "error",
  aborted: "other",
  max_turns: "other",
  stopped_by_hook: "other",
  terminated: "other",
  stop_condition: "other",
};

/**
 * Turns one run's events into the AI SDK's UI message stream chunks (protocol v1, `ai` 5):
 * the whole run is one assistant message, each turn a step.
 *
 * ```text
 * agent_start            → start
 * turn_start / turn_end  → start-step / finish-step
 * text_*, thinking_*     → text-*, reasoning-*
 * toolcall_*             → tool-input-start, -delta, -available
 * tool_execution_update  → tool-output-available (preliminary)
 * tool_execution_end     → tool-output-available / tool-output-error
 * tool_approval_*        → data-tool-approval
 * a failed model call    → error
 * agent_end              → finish (or abort)
 * ```
 *
 * @example agent.prompt("hi").pipe(toUIMessageChunks())
 */
export function toUIMessageChunks(options: UIMessageChunkOptions = {}): OperatorFunction<AgentEvent, UIMessageChunk<unknown, RxagentDataParts>> {
  return (events$: Observable<AgentEvent>) =>
    defer(() => {
      const state: ChunkState = { turn: 0, open: new Map(), userMessages: 0, approvals: new Map() };
      const messageId = options.messageId ?? crypto.randomUUID();
      return events$.pipe(concatMap((event) => chunksOf(event, state, messageId, options)));
    });
}

function chunksOf(event: AgentEvent, state: ChunkState, messageId: string, options: UIMessageChunkOptions): UIMessageChunk<unknown, RxagentDataParts>[] {
  const output = (result: AgentToolResult<unknown>, toolName: string) => (options.toolOutput ? options.toolOutput(result, toolName) : result);
  switch (event.type) {
    case "agent_start":
      return [{ type: "start", messageId }];
    case "turn_start":
      state.turn += 1;
      return [{ type: "start-step" }];
    case "turn_end":
      return [{ type: "finish-step" }];
    case "message_update":
      return modelChunks(event.assistantMessageEvent, state);
    case "message_end":
      return messageEndChunks(event.message, state);
    case "tool_execution_update":
      return [{ type: "tool-output-available", toolCallId: event.toolCallId, output: output(event.partialResult, event.toolName), preliminary: true }];
    case "tool_execution_end":
      return event.isError
        ? [{ type: "tool-output-error", toolCallId: event.toolCallId, errorText: textOf(event.result.content) }]
        : [{ type: "tool-output-available", toolCallId: event.toolCallId, output: output(event.result, event.toolName) }];
    case "tool_approval_start":
      state.approvals.set(event.toolCallId, event.args);
      return [approvalChunk(event.toolCallId, { toolCallId: event.toolCallId, toolName: event.toolName, input: event.args, state: "waiting" })];
    case "tool_approval_end": {
      const input = state.approvals.get(event.toolCallId);
      state.approvals.delete(event.toolCallId);
      return [
        approvalChunk(event.toolCallId, {
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          input,
          state: event.approved ? "approved" : "denied",
          ...(event.reason === undefined ? {} : { reason: event.reason }),
        }),
      ];
    }
    case "agent_end":
      return endChunks(event, options);
    default:
      return [];
  }
}

function modelChunks(event: ModelEvent, state: ChunkState): UIMessageChunk<unknown, RxagentDataParts>[] {
  switch (event.type) {
    case "text_start":
    case "thinking_start": {
      const kind = event.type === "text_start" ? "text" : "reasoning";
      const id = partId(state, event.contentIndex);
      state.open.set(id, kind);
      return [{ type: `${kind}-start`, id }];
    }
    case "text_delta":
      return [{ type: "text-delta", id: partId(state, event.contentIndex), delta: event.delta }];
    case "thinking_delta":
      return [{ type: "reasoning-delta", id: partId(state, event.contentIndex), delta: event.delta }];
    case "text_end":
    case "thinking_end": {
      const id = partId(state, event.contentIndex);
      state.open.delete(id);
      return [{ type: event.type === "text_end" ? "text-end" : "reasoning-end", id }];
    }
    case "toolcall_start": {
      const call = event.partial.content[event.contentIndex] as ToolCall;
      return [{ type: "tool-input-start", toolCallId: call.id, toolName: call.name }];
    }
    case "toolcall_delta": {
      const call = event.partial.content[event.contentIndex] as ToolCall;
      return [{ type: "tool-input-delta", toolCallId: call.id, inputTextDelta: event.delta }];
    }
    case "toolcall_end":
      return [{ type: "tool-input-available", toolCallId: event.toolCall.id, toolName: event.toolCall.name, input: event.toolCall.arguments }];
    default:
      return [];
  }
}

function messageEndChunks(message: AgentMessage, state: ChunkState): UIMessageChunk<unknown, RxagentDataParts>[] {
  if (message.role === "user" && state.turn > 1) {
    state.userMessages += 1;
    return [{ type: "data-user-message", id: `user-${state.userMessages}`, data: { text: textOf(message.content) } }];
  }
  if (message.role !== "assistant") return [];
  // An aborted or failed stream leaves parts open; closed here, the UIMessage shows them done.
  const closing: UIMessageChunk<unknown, RxagentDataParts>[] = [...state.open].map(([id, kind]) => ({ type: kind === "text" ? "text-end" : "reasoning-end", id }));
  state.open.clear();
  if (message.stopReason === "error") closing.push({ type: "error", errorText: message.errorMessage ?? "The model call failed." });
  return closing;
}

function endChunks(end: AgentEnd, options: UIMessageChunkOptions): UIMessageChunk<unknown, RxagentDataParts>[] {
  if (end.reason === "aborted") return [{ type: "abort" }];
  const failure: UIMessageChunk<unknown, RxagentDataParts>[] = end.errorMessage === undefined ? [] : [{ type: "error", errorText: end.errorMessage }];
  const metadata = options.messageMetadata ? options.messageMetadata(end) : { reason: end.reason, usage: end.usage };
  return [
    ...failure,
    {
      type: "finish",
      ...(end.reason === undefined ? {} : { finishReason: FINISH_REASONS[end.reason] }),
      ...(metadata === undefined ? {} : { messageMetadata: metadata }),
    },
  ];
}

function approvalChunk(toolCallId: string, data: RxagentDataParts["tool-approval"]): UIMessageChunk<unknown, RxagentDataParts> {
  return { type: "data-tool-approval", id: toolCallId, data };
}

/** Parts are numbered per turn: a content index restarts at 0 in every assistant message. */
function partId(state: ChunkState, contentIndex: number): string {
  return `${state.turn}-${contentIndex}`;
}

function textOf(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.flatMap((part) => (part.type === "text" && part.text !== undefined ? [part.text] : [])).join("\n");
}
