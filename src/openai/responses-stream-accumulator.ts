import type { Usage } from "../types/messages.js";
import type { ModelEvent } from "../types/model.js";
import { AssistantMessageDraft } from "../model/assistant-message-draft.js";
import { amount } from "../model/usable-usage.js";
import type { ModelCost } from "./openai-options.js";
import { toUsage } from "./openai-options.js";
import { describeProviderError, isAbortError, payloadErrorText, StreamInterruptedError } from "./provider-errors.js";
import type { AccumulatorOptions, StreamAccumulator } from "./stream-accumulator.js";

/** An output item as streamed (message, reasoning, function_call; others are ignored). */
export interface ResponsesItem {
  type: string;
  id?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  summary?: { text?: string }[];
  encrypted_content?: string | null;
  content?: { type?: string; text?: string; refusal?: string }[];
}

export interface ResponsesUsagePayload {
  input_tokens?: number | null;
  output_tokens?: number | null;
  total_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null } | null;
}

interface ResponsesErrorPayload {
  code?: string | null;
  message?: string | null;
}

/** One Responses stream event, loosely typed: older recordings lack fields the SDK types require. */
export interface ResponsesStreamEvent {
  type: string;
  output_index?: number;
  item_id?: string;
  item?: ResponsesItem;
  delta?: string;
  arguments?: string;
  summary_index?: number;
  response?: {
    id?: string;
    model?: string;
    usage?: ResponsesUsagePayload | null;
    error?: ResponsesErrorPayload | null;
    incomplete_details?: { reason?: string | null } | null;
  };
  error?: ResponsesErrorPayload | null;
  code?: string | null;
  message?: string | null;
}

/**
 * Folds Responses API events into `ModelEvent`s: each output item is one block (reasoning ->
 * thinking, message -> text, function_call -> toolCall), opened by `output_item.added` and
 * closed by `output_item.done`. The terminal event (`response.completed`, `.incomplete`,
 * `.failed`, `error`) ends the message.
 *
 * Reasoning summary parts are joined with a blank line; the finished reasoning item is kept as
 * JSON in `thinkingSignature` so it can be sent back. A tool call's id is `call_id|item_id`.
 */
export class ResponsesStreamAccumulator implements StreamAccumulator<ResponsesStreamEvent> {
  private readonly draft: AssistantMessageDraft;
  private readonly blocks = new Map<string, number>();
  private events = 0;

  constructor(private readonly options: AccumulatorOptions) {
    this.draft = new AssistantMessageDraft(options);
  }

  push(event: ResponsesStreamEvent): ModelEvent[] {
    if (this.draft.isEnded) return [];
    this.events++;
    const events = this.draft.start();
    const index = this.blockIndex(event);
    switch (event.type) {
      case "response.created":
      case "response.in_progress":
        this.draft.setResponse(event.response?.id, event.response?.model);
        break;
      case "response.output_item.added":
        if (event.item) events.push(...this.openItem(event.item, event));
        break;
      case "response.reasoning_summary_part.added":
        // Parts are separate paragraphs of one summary.
        if (index !== undefined && (event.summary_index ?? 0) > 0) events.push(...this.draft.appendThinking(index, "\n\n"));
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        if (index !== undefined) events.push(...this.draft.appendThinking(index, event.delta ?? ""));
        break;
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (index !== undefined) events.push(...this.draft.appendText(index, event.delta ?? ""));
        break;
      case "response.function_call_arguments.delta":
        if (index !== undefined) events.push(...this.draft.appendToolArguments(index, event.delta ?? ""));
        break;
      case "response.output_item.done":
        if (index !== undefined && event.item) events.push(...this.closeItem(index, event.item));
        break;
      case "response.completed":
        this.finishResponse(event);
        events.push(...this.draft.finish(this.draft.hasToolCalls ? "toolUse" : "stop"));
        break;
      case "response.incomplete":
        events.push(...this.incomplete(event));
        break;
      case "response.failed":
        this.finishResponse(event);
        events.push(...this.draft.fail("error", errorText(event.response?.error, "The response failed")));
        break;
      case "error":
        events.push(...this.draft.fail("error", errorText(event.error ?? event, "The stream reported an error")));
        break;
    }
    return events;
  }

  end(): ModelEvent[] {
    if (this.draft.isEnded) return [];
    return this.fail(new StreamInterruptedError(this.events, { detail: "the stream ended before response.completed" }));
  }

  fail(error: unknown): ModelEvent[] {
    return this.draft.fail(isAbortError(error) ? "aborted" : "error", describeProviderError(error));
  }

  private blockIndex(event: ResponsesStreamEvent): number | undefined {
    if (event.output_index !== undefined) {
      const byOutput = this.blocks.get(`output:${event.output_index}`);
      if (byOutput !== undefined) return byOutput;
    }
    const itemId = event.item_id ?? event.item?.id;
    return itemId ? this.blocks.get(`item:${itemId}`) : undefined;
  }

  private openItem(item: ResponsesItem, event: ResponsesStreamEvent): ModelEvent[] {
    let opened: { index: number; events: ModelEvent[] };
    switch (item.type) {
      case "reasoning":
        opened = this.draft.openThinking();
        break;
      case "message":
        opened = this.draft.openText(item.id);
        break;
      case "function_call":
        opened = this.draft.openToolCall(item.id ? `${item.call_id ?? ""}|${item.id}` : (item.call_id ?? ""), item.name ?? "");
        opened.events.push(...this.draft.appendToolArguments(opened.index, item.arguments ?? ""));
        break;
      default:
        return [];
    }
    if (event.output_index !== undefined) this.blocks.set(`output:${event.output_index}`, opened.index);
    if (item.id) this.blocks.set(`item:${item.id}`, opened.index);
    return opened.events;
  }

  private closeItem(index: number, item: ResponsesItem): ModelEvent[] {
    switch (item.type) {
      case "reasoning": {
        const summary = (item.summary ?? []).map((part) => part.text ?? "").join("\n\n");
        this.draft.updateThinking(index, {
          thinkingSignature: JSON.stringify(item),
          // Only when nothing streamed: a summary delivered whole at the end.
          ...(this.draft.isOpen(index) && summary !== "" && !this.hasThinking(index) ? { thinking: summary } : {}),
        });
        return this.draft.close(index);
      }
      case "function_call":
        return this.draft.close(index, item.arguments);
      default:
        return this.draft.close(index);
    }
  }

  private hasThinking(index: number): boolean {
    return this.draft.thinkingAt(index) !== "";
  }

  private finishResponse(event: ResponsesStreamEvent): void {
    const response = event.response;
    this.draft.setResponse(response?.id, response?.model);
    if (response?.usage) this.draft.setUsage(responsesUsage(response.usage, this.options.cost));
  }

  private incomplete(event: ResponsesStreamEvent): ModelEvent[] {
    this.finishResponse(event);
    const reason = event.response?.incomplete_details?.reason;
    if (reason === "content_filter") {
      return this.draft.fail("error", "The response was blocked by the provider's content filter (incomplete: content_filter)");
    }
    return this.draft.finish("length");
  }
}

export function responsesUsage(usage: ResponsesUsagePayload, cost: ModelCost | undefined): Usage {
  // Each count read as a finite number or 0 (`amount`): a server of its own may send anything.
  const total = usage.total_tokens == null ? undefined : amount(usage.total_tokens);
  return toUsage(
    {
      input: amount(usage.input_tokens),
      output: amount(usage.output_tokens),
      cached: amount(usage.input_tokens_details?.cached_tokens),
      ...(total !== undefined ? { total } : {}),
    },
    cost,
  );
}

function errorText(error: ResponsesErrorPayload | null | undefined, fallback: string): string {
  return payloadErrorText(error, fallback) ?? fallback;
}
