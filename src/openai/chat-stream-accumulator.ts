import type { Usage } from "../types/messages.js";
import type { ModelEvent } from "../types/model.js";
import { AssistantMessageDraft } from "../model/assistant-message-draft.js";
import { amount } from "../model/usable-usage.js";
import type { ModelCost } from "./openai-options.js";
import { toUsage } from "./openai-options.js";
import { describeProviderError, isAbortError, StreamInterruptedError } from "./provider-errors.js";
import type { AccumulatorOptions, StreamAccumulator } from "./stream-accumulator.js";

/** A tool-call fragment as OpenAI and compatible servers send it; every field may be missing. */
export interface ChatToolCallDelta {
  index?: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

export interface ChatDelta {
  role?: string | null;
  content?: string | null;
  refusal?: string | null;
  /** DeepSeek, xAI, Z.ai, llama.cpp. */
  reasoning_content?: string | null;
  /** Groq (gpt-oss), OpenRouter, Ollama. */
  reasoning?: string | null;
  tool_calls?: ChatToolCallDelta[] | null;
}

export interface ChatUsagePayload {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
  prompt_cache_hit_tokens?: number | null;
}

/** One streamed chunk, loosely typed: compatible servers add, omit and reorder fields. */
export interface ChatChunk {
  id?: string | null;
  model?: string | null;
  choices?: { index?: number; delta?: ChatDelta | null; finish_reason?: string | null }[] | null;
  usage?: ChatUsagePayload | null;
  error?: unknown;
}

type OpenProse = { kind: "text" | "thinking"; index: number };

/**
 * Folds Chat Completions chunks into `ModelEvent`s.
 *
 * Tool calls are keyed by `index`; a call whose delta has no `index` (Mistral) is keyed by its
 * id, and an id-less fragment continues the last call. A call ends (`toolcall_end`) when the
 * next one starts and its arguments are already a whole JSON object, so eager tools start while
 * the model streams the next call; a call still incomplete stays open until the tool calls end
 * (finish, or text after them), so fragments of parallel calls may interleave. Only choice 0 is
 * followed (with `n > 1` the others are ignored).
 */
export class ChatStreamAccumulator implements StreamAccumulator<ChatChunk> {
  private readonly draft: AssistantMessageDraft;
  private prose: OpenProse | undefined;
  private readonly toolBlocks = new Map<string, number>();
  private lastToolKey: string | undefined;
  private finishReason: string | undefined;
  private chunks = 0;

  constructor(private readonly options: AccumulatorOptions) {
    this.draft = new AssistantMessageDraft(options);
  }

  push(chunk: ChatChunk): ModelEvent[] {
    if (this.draft.isEnded) return [];
    this.chunks++;
    const events = this.draft.start();
    this.draft.setResponse(chunk.id ?? undefined, chunk.model ?? undefined);
    if (chunk.usage) this.draft.setUsage(chatUsage(chunk.usage, this.options.cost));
    if (chunk.error) return [...events, ...this.fail(chunk.error)];

    const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0);
    const delta = choice?.delta;
    if (delta) {
      events.push(...this.appendProse("thinking", delta.reasoning_content ?? delta.reasoning ?? ""));
      events.push(...this.appendProse("text", delta.content ?? ""));
      events.push(...this.appendProse("text", delta.refusal ?? ""));
      delta.tool_calls?.forEach((toolCall) => events.push(...this.appendToolCall(toolCall)));
    }
    if (choice?.finish_reason) this.finishReason = choice.finish_reason;
    return events;
  }

  end(): ModelEvent[] {
    if (this.draft.isEnded) return [];
    switch (this.finishReason) {
      case undefined:
        return this.fail(new StreamInterruptedError(this.chunks, { detail: "the stream ended without a finish reason" }));
      case "content_filter":
        return this.draft.fail("error", "The response was blocked by the provider's content filter (finish_reason: content_filter)");
      case "length":
        return this.draft.finish("length");
      default:
        // Some servers say "stop" even when they called tools; the calls are what matters.
        return this.draft.finish(this.draft.hasToolCalls ? "toolUse" : "stop");
    }
  }

  fail(error: unknown): ModelEvent[] {
    return this.draft.fail(isAbortError(error) ? "aborted" : "error", describeProviderError(error));
  }

  private appendProse(kind: "text" | "thinking", delta: string): ModelEvent[] {
    if (delta === "") return [];
    const events: ModelEvent[] = [];
    if (this.prose?.kind !== kind) {
      // Blocks are sequential: a new kind of output ends whatever was streaming before.
      events.push(...this.draft.closeAll());
      this.toolBlocks.clear();
      this.lastToolKey = undefined;
      const opened = kind === "text" ? this.draft.openText() : this.draft.openThinking();
      events.push(...opened.events);
      this.prose = { kind, index: opened.index };
    }
    const index = this.prose.index;
    events.push(...(kind === "text" ? this.draft.appendText(index, delta) : this.draft.appendThinking(index, delta)));
    return events;
  }

  private appendToolCall(toolCall: ChatToolCallDelta): ModelEvent[] {
    const events: ModelEvent[] = [];
    const id = toolCall.id ?? "";
    const name = toolCall.function?.name ?? "";
    const key = this.toolKey(toolCall, id);
    let index = this.toolBlocks.get(key);
    if (index === undefined) {
      if (this.prose) {
        events.push(...this.draft.close(this.prose.index));
        this.prose = undefined;
      }
      for (const openIndex of this.toolBlocks.values()) events.push(...this.draft.closeIfComplete(openIndex));
      const opened = this.draft.openToolCall(id, name);
      events.push(...opened.events);
      index = opened.index;
      this.toolBlocks.set(key, index);
    } else {
      // Qwen repeats `"id": ""` on every fragment: keep the first non-empty id and name.
      this.draft.updateToolCall(index, { id, name });
    }
    this.lastToolKey = key;
    const fragment = toolCall.function?.arguments ?? "";
    if (!this.draft.isOpen(index)) {
      // Ended because its arguments were a whole object: whitespace changes nothing, anything
      // else would have made them invalid, and a call cannot change after its toolcall_end.
      if (fragment.trim() === "") return events;
      return [...events, ...this.draft.fail("error", `Tool call ${index} got more arguments after they formed a whole JSON object: ${JSON.stringify(fragment.slice(0, 80))}`)];
    }
    events.push(...this.draft.appendToolArguments(index, fragment));
    return events;
  }

  private toolKey(toolCall: ChatToolCallDelta, id: string): string {
    if (typeof toolCall.index === "number") return `index:${toolCall.index}`;
    if (id !== "") return `id:${id}`;
    return this.lastToolKey ?? "index:0";
  }
}

/**
 * Chat usage in rxagent's shape. xAI leaves reasoning tokens out of `completion_tokens` (its
 * total is prompt + completion + reasoning); everyone else counts them in.
 */
export function chatUsage(usage: ChatUsagePayload, cost: ModelCost | undefined): Usage {
  // Each count read as a finite number or 0 (`amount`): a server of its own may send anything.
  const prompt = amount(usage.prompt_tokens);
  const completion = amount(usage.completion_tokens);
  const reasoning = amount(usage.completion_tokens_details?.reasoning_tokens);
  const total = usage.total_tokens == null ? undefined : amount(usage.total_tokens);
  const reasoningSeparate = reasoning > 0 && total === prompt + completion + reasoning;
  const cached = amount(usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens);
  return toUsage(
    { input: prompt, output: reasoningSeparate ? completion + reasoning : completion, cached, ...(total !== undefined ? { total } : {}) },
    cost,
  );
}
