import { asyncScheduler, Observable, type SchedulerLike } from "rxjs";
import { emptyUsage } from "../types/messages.js";
import type { AssistantMessage, LlmContext, Model, ModelEvent, ToolCall } from "../types.js";
import { planReply, type ReplyPlan } from "./demo-policy.js";

export interface DemoModelOptions {
  /**
   * Time between two streamed events (tokens), in the scheduler's milliseconds. Default 25: slow
   * enough to read along and to type a steering message mid-reply; 0 emits synchronously.
   */
  delay?: number;
  /** Paces the tokens and stamps the messages. Default `asyncScheduler`; tests pass a `TestScheduler`. */
  scheduler?: SchedulerLike;
  /** Decides each reply. Default `planReply`. */
  policy?: (context: LlmContext) => ReplyPlan;
}

/** The identity every demo message reports. */
export const demoModelInfo = { id: "rxagent-demo", provider: "rxagent", api: "rxagent-demo" } as const;

/**
 * An offline `Model` that reads the conversation and decides, so the agent loop can be watched
 * without an API key: arithmetic goes to the calculator, time to the clock, files to the file
 * tools (several at once when independent), tool results become an answer, steering is
 * acknowledged. It streams token by token, each event a fresh immutable snapshot.
 *
 * Contract: cold; the reply is planned on subscribe. Aborting the signal ends the stream at
 * once with an `error` event (`stopReason: "aborted"`); unsubscribing cancels its timer.
 * @example new Agent({ model: demoModel({ delay: 0 }), tools: demoTools() })
 */
export function demoModel(options: DemoModelOptions = {}): Model {
  const scheduler = options.scheduler ?? asyncScheduler;
  const delay = options.delay ?? 25;
  const policy = options.policy ?? planReply;
  return {
    ...demoModelInfo,
    stream(context, { signal }) {
      return new Observable<ModelEvent>((subscriber) => {
        const callNumber = context.messages.filter((message) => message.role === "assistant").length + 1;
        const { base, events } = replyEvents(policy(context), callNumber, scheduler.now(), estimateTokens(context));
        let latest = base;
        let index = 0;
        const abort = () => {
          subscriber.next({ type: "error", reason: "aborted", error: { ...latest, stopReason: "aborted", errorMessage: "Request was aborted" } });
          subscriber.complete();
        };
        /** Emits the next event; false once the stream has ended. */
        const emitNext = (): boolean => {
          const event = events[index++];
          if (event === undefined || subscriber.closed) return false;
          latest = "partial" in event ? event.partial : latest;
          subscriber.next(event);
          if (event.type === "done" || event.type === "error") {
            subscriber.complete();
            return false;
          }
          return true;
        };
        if (signal.aborted) {
          abort();
          return undefined;
        }
        // Listening (rather than checking on each tick) ends the reply the moment the run aborts.
        signal.addEventListener("abort", abort, { once: true });
        const stopListening = () => signal.removeEventListener("abort", abort);
        if (delay <= 0) {
          while (emitNext());
          return stopListening;
        }
        const action = scheduler.schedule(function () {
          if (emitNext()) this.schedule(undefined, delay);
        }, delay);
        return () => {
          action.unsubscribe();
          stopListening();
        };
      });
    },
  };
}

/** The plan as a stream of events: start, thinking, text, tool calls, done. */
function replyEvents(plan: ReplyPlan, callNumber: number, timestamp: number, inputTokens: number): { base: AssistantMessage; events: ModelEvent[] } {
  const stopReason = plan.toolCalls.length > 0 ? "toolUse" : "stop";
  const base: AssistantMessage = {
    role: "assistant",
    content: [],
    api: demoModelInfo.api,
    provider: demoModelInfo.provider,
    model: demoModelInfo.id,
    usage: emptyUsage(),
    stopReason,
    timestamp,
  };
  const events: ModelEvent[] = [{ type: "start", partial: base }];
  let partial = base;
  let outputTokens = 0;
  const open = (block: AssistantMessage["content"][number]) => (partial = { ...partial, content: [...partial.content, block] });
  const replaceLast = (block: AssistantMessage["content"][number]) => (partial = { ...partial, content: [...partial.content.slice(0, -1), block] });

  if (plan.thinking) {
    const contentIndex = partial.content.length;
    events.push({ type: "thinking_start", contentIndex, partial: open({ type: "thinking", thinking: "" }) });
    let thinking = "";
    for (const delta of tokens(plan.thinking)) {
      thinking += delta;
      outputTokens += 1;
      events.push({ type: "thinking_delta", contentIndex, delta, partial: replaceLast({ type: "thinking", thinking }) });
    }
    events.push({ type: "thinking_end", contentIndex, content: thinking, partial });
  }
  if (plan.text) {
    const contentIndex = partial.content.length;
    events.push({ type: "text_start", contentIndex, partial: open({ type: "text", text: "" }) });
    let text = "";
    for (const delta of tokens(plan.text)) {
      text += delta;
      outputTokens += 1;
      events.push({ type: "text_delta", contentIndex, delta, partial: replaceLast({ type: "text", text }) });
    }
    events.push({ type: "text_end", contentIndex, content: text, partial });
  }
  plan.toolCalls.forEach((call, callIndex) => {
    const contentIndex = partial.content.length;
    const id = `demo_${callNumber}_${callIndex + 1}`;
    events.push({ type: "toolcall_start", contentIndex, partial: open({ type: "toolCall", id, name: call.name, arguments: {} }) });
    const json = JSON.stringify(call.arguments);
    // Arguments stream as JSON fragments, as a real provider's do; the object is whole at the end.
    for (let offset = 0; offset < json.length; offset += 12) {
      outputTokens += 1;
      events.push({ type: "toolcall_delta", contentIndex, delta: json.slice(offset, offset + 12), partial });
    }
    const toolCall: ToolCall = { type: "toolCall", id, name: call.name, arguments: call.arguments };
    events.push({ type: "toolcall_end", contentIndex, toolCall, partial: replaceLast(toolCall) });
  });
  const usage = { ...emptyUsage(), input: inputTokens, output: outputTokens, totalTokens: inputTokens + outputTokens };
  const message = { ...partial, usage };
  events.push({ type: "done", reason: stopReason, message });
  return { base, events };
}

/** Words with their trailing space: the demo's tokens. */
function tokens(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text];
}

/** About four characters per token, as for English with a BPE tokenizer. */
function estimateTokens(context: LlmContext): number {
  const characters = (context.systemPrompt?.length ?? 0) + JSON.stringify(context.messages).length;
  return Math.ceil(characters / 4);
}
