import { asyncScheduler, Observable, type SchedulerLike } from "rxjs";
import { emptyUsage } from "../types/messages.js";
import { AssistantMessageDraft } from "../model/assistant-message-draft.js";
import type { LlmContext, Model, ModelEvent } from "../types.js";
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
        const inputTokens = estimateTokens(context);
        const events = replyEvents(policy(context), callNumber, scheduler.now(), inputTokens);
        let latest = (events[0] as Extract<ModelEvent, { type: "start" }>).partial;
        let index = 0;
        let streamedTokens = 0;
        // An aborted reply still cost what it streamed: its usage counts the deltas sent so far.
        const abort = () => {
          const usage = { ...emptyUsage(), input: inputTokens, output: streamedTokens, totalTokens: inputTokens + streamedTokens };
          subscriber.next({ type: "error", reason: "aborted", error: { ...latest, usage, stopReason: "aborted", errorMessage: "Request was aborted" } });
          subscriber.complete();
        };
        /** Emits the next event; false once the stream has ended. */
        const emitNext = (): boolean => {
          const event = events[index++];
          if (event === undefined || subscriber.closed) return false;
          latest = "partial" in event ? event.partial : latest;
          if (event.type.endsWith("_delta")) streamedTokens += 1;
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

/**
 * The plan as a stream of events: start, thinking, text, tool calls (their arguments in JSON
 * fragments, as a real provider sends them), done. The draft the providers use builds the
 * immutable snapshots, so the demo streams exactly as they do.
 */
function replyEvents(plan: ReplyPlan, callNumber: number, timestamp: number, inputTokens: number): ModelEvent[] {
  const draft = new AssistantMessageDraft({ api: demoModelInfo.api, provider: demoModelInfo.provider, model: demoModelInfo.id, timestamp });
  const events: ModelEvent[] = draft.start();
  let outputTokens = 0;
  const stream = (block: { index: number; events: ModelEvent[] }, deltas: string[], append: (index: number, delta: string) => ModelEvent[]) => {
    events.push(...block.events);
    for (const delta of deltas) {
      outputTokens += 1;
      events.push(...append(block.index, delta));
    }
    events.push(...draft.close(block.index));
  };
  if (plan.thinking) stream(draft.openThinking(), tokens(plan.thinking), (index, delta) => draft.appendThinking(index, delta));
  if (plan.text) stream(draft.openText(), tokens(plan.text), (index, delta) => draft.appendText(index, delta));
  plan.toolCalls.forEach((call, callIndex) => {
    const json = JSON.stringify(call.arguments);
    const fragments: string[] = [];
    for (let offset = 0; offset < json.length; offset += 12) fragments.push(json.slice(offset, offset + 12));
    stream(draft.openToolCall(`demo_${callNumber}_${callIndex + 1}`, call.name), fragments, (index, delta) => draft.appendToolArguments(index, delta));
  });
  draft.setUsage({ ...emptyUsage(), input: inputTokens, output: outputTokens, totalTokens: inputTokens + outputTokens });
  events.push(...draft.finish(plan.toolCalls.length > 0 ? "toolUse" : "stop"));
  return events;
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
