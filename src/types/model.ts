import type { Observable } from "rxjs";
import type { JsonSchema } from "../tools/tool-schema.js";
import type { AssistantMessage, Message, StopReason, ToolCall } from "./messages.js";

/**
 * What a model streams while it writes one assistant message. Each event carries the `partial`
 * message as it stands after the event; a stream ends with exactly one `done` or `error`.
 *
 * Contract: an event changes only the block at its `contentIndex`, and a partial handed out is
 * not changed afterwards (make a new block and content array instead, as rxagent's providers
 * and `fromPiAi` do). The loop checks each new tool-call block once for nesting
 * (`maxJsonDepth`), and the final message whole.
 */
export type ModelEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "thinking_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "toolcall_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse">; message: AssistantMessage }
  | {
      type: "error";
      reason: Extract<StopReason, "aborted" | "error">;
      error: AssistantMessage;
      /** What the provider knows about the failure, for middleware deciding on a retry or a fallback. */
      failure?: ModelFailure;
    };

/** A model stream's final `error` event. */
export type ModelErrorEvent = Extract<ModelEvent, { type: "error" }>;

/**
 * Why a model call failed, as far as its provider could tell. Carried by the `error` event (not
 * by the message, which goes into the transcript) so `withRetry` and `withFallback` can decide
 * without parsing `errorMessage`.
 */
export interface ModelFailure {
  /** True for failures worth another attempt: 408, 409, 429, 5xx, a connection refused or reset. */
  transient: boolean;
  /** The HTTP status, when the server answered. */
  status?: number;
  /** The delay the server asked for (`Retry-After`, `retry-after-ms`), in milliseconds. */
  retryAfterMs?: number;
}

/**
 * A tool as the model sees it. `parameters` is JSON Schema, sent unchanged (TypeBox schemas are
 * JSON Schema; the loop hands models the JSON Schema of a Standard Schema tool).
 */
export interface ModelTool {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** Everything a model call gets: the system prompt, model messages and tools. */
export interface LlmContext {
  systemPrompt?: string;
  /**
   * The transcript as the model sees it. Read it during the call; copy it to keep it: without a
   * `convertToLlm` hook this is the run's own array, which grows after the call ends. Why not a
   * fresh copy per call: copying costs time in proportion to the transcript on every turn, so a
   * long session's turns would grow slower and slower.
   */
  messages: readonly Message[];
  tools?: ModelTool[];
}

/**
 * How hard a reasoning model thinks on a call, in pi-agent-core's words: `"off"` asks for no
 * reasoning, `"minimal"` to `"xhigh"` for more and more.
 */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

export interface ModelStreamOptions {
  /**
   * Fires when the run is aborted or the subscriber leaves.
   *
   * Contract: stop the request at once and end with an `error` event whose message has
   * `stopReason: "aborted"`.
   */
  signal: AbortSignal;
  /**
   * How hard to think on this call (`AgentLoopConfig.thinkingLevel`, `Agent.replaceState`);
   * absent when the caller did not say, and the model then thinks as it was configured.
   *
   * Contract: overrides the level the model was made with (`fromPiAi`'s `reasoning`, the OpenAI
   * models' `reasoningEffort`); `"off"` sends no reasoning setting. A model without levels ignores it.
   */
  thinkingLevel?: ThinkingLevel;
}

/**
 * A language model the loop can call.
 *
 * Contract: a provider failure is not an Observable error but an `error` event with a final
 * message (`stopReason` `"error"` or `"aborted"`, `errorMessage` set). The Observable is cold:
 * the request starts on subscribe and unsubscribing cancels it.
 */
export interface Model {
  id: string;
  provider: string;
  api: string;
  stream(context: LlmContext, options: ModelStreamOptions): Observable<ModelEvent>;
}
