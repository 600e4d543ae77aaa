import type { FinishReason, UIMessageChunk } from "ai";
import { concatMap, defer, type Observable, type OperatorFunction } from "rxjs";
import type { AgentEndReason, AgentEvent, AgentMessage, AgentToolResult, AssistantMessage, ModelEvent, ToolCall } from "../index.js";

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
  /** Tool calls of this message whose input part the client has: started, or available. */
  calls: Map<string, "started" | "available">;
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
      const state: ChunkState = { turn: 0, open: new Map(), userMessages: 0, approvals: new Map(), calls: new Map() };
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

/**
 * The chunks of one streamed model event, in the order the AI SDK's reader needs them: a part is
 * started before its deltas and ended once. Why checked here: the loop passes each
 * `assistantMessageEvent` on as the model sent it, and the reader fails the whole message on a
 * delta or end of a part it never saw (a provider that skips `text_start`, a `contentIndex` that
 * points nowhere): such a delta starts its part, and such an end, or an event that names no block
 * of its kind, makes no chunk.
 */
function modelChunks(event: ModelEvent, state: ChunkState): UIMessageChunk<unknown, RxagentDataParts>[] {
  switch (event.type) {
    case "text_start":
    case "thinking_start":
    case "text_delta":
    case "thinking_delta":
    case "text_end":
    case "thinking_end":
      return textChunks(event, state);
    case "toolcall_start":
    case "toolcall_delta": {
      const call = toolCallAt(event.partial, event.contentIndex);
      if (call === undefined || state.calls.get(call.id) === "available") return [];
      const start: UIMessageChunk<unknown, RxagentDataParts>[] = state.calls.has(call.id) ? [] : [{ type: "tool-input-start", toolCallId: call.id, toolName: call.name }];
      state.calls.set(call.id, "started");
      if (event.type === "toolcall_start" || typeof event.delta !== "string") return start;
      return [...start, { type: "tool-input-delta", toolCallId: call.id, inputTextDelta: event.delta }];
    }
    case "toolcall_end":
      return isToolCall(event.toolCall) ? inputAvailable(event.toolCall, state) : [];
    default:
      return [];
  }
}

type TextEvent = Extract<ModelEvent, { type: `${"text" | "thinking"}_${"start" | "delta" | "end"}` }>;

function textChunks(event: TextEvent, state: ChunkState): UIMessageChunk<unknown, RxagentDataParts>[] {
  if (!Number.isInteger(event.contentIndex) || event.contentIndex < 0) return [];
  const kind = event.type.startsWith("text") ? "text" : "reasoning";
  const id = partId(state, event.contentIndex);
  const open = state.open.get(id);
  if (open !== undefined && open !== kind) return [];
  if (event.type === "text_end" || event.type === "thinking_end") {
    if (open === undefined) return [];
    state.open.delete(id);
    return [{ type: `${kind}-end`, id }];
  }
  const start: UIMessageChunk<unknown, RxagentDataParts>[] = open === undefined ? [{ type: `${kind}-start`, id }] : [];
  state.open.set(id, kind);
  if (event.type === "text_start" || event.type === "thinking_start" || typeof event.delta !== "string") return start;
  return [...start, { type: `${kind}-delta`, id, delta: event.delta }];
}

/** The input of a tool call as available, once per call of the message. */
function inputAvailable(call: ToolCall, state: ChunkState): UIMessageChunk<unknown, RxagentDataParts>[] {
  if (state.calls.get(call.id) === "available") return [];
  state.calls.set(call.id, "available");
  return [{ type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.arguments }];
}

/** The tool call at `contentIndex` of a streamed partial, when there is one. */
function toolCallAt(partial: AssistantMessage, contentIndex: number): ToolCall | undefined {
  const block: unknown = Number.isInteger(contentIndex) ? partial.content[contentIndex] : undefined;
  return isToolCall(block) ? block : undefined;
}

function isToolCall(block: unknown): block is ToolCall {
  const call = block as Partial<ToolCall> | null;
  return typeof call === "object" && call !== null && call.type === "toolCall" && typeof call.id === "string" && typeof call.name === "string";
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
  // A call the model did not stream (a provider that sends only its final message) gets its input
  // here: its output comes next, and the reader refuses an output for a call it never saw.
  for (const block of message.content) if (isToolCall(block)) closing.push(...inputAvailable(block, state));
  state.calls.clear();
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
