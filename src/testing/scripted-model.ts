import { asyncScheduler, Observable, type SchedulerLike } from "rxjs";
import { emptyUsage } from "../types/messages.js";
import type { AssistantMessage, LlmContext, Model, ModelEvent, StopReason, ThinkingLevel, Usage } from "../types.js";
import { jsonText } from "../util/json-text.js";
import { SharedContent } from "../util/shared-content.js";

/** A content block of a scripted reply; tool call ids default to `call_<call>_<block>`. */
export type ScriptedBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string }
  | { type: "toolCall"; id?: string; name: string; arguments: Record<string, unknown> };

/** One scripted assistant reply. */
export interface ScriptedReply {
  content?: ScriptedBlock[];
  /** Default: `"toolUse"` when the reply has tool calls, else `"stop"`. */
  stopReason?: StopReason;
  /** With `stopReason` `"error"` or `"aborted"`. */
  errorMessage?: string;
  usage?: Partial<Omit<Usage, "cost">>;
  /** Overrides the model's `delay` for this reply. */
  delay?: number;
  /** Make the Observable itself misbehave, to test the loop's guard rails. */
  failure?: { kind: "observable-error"; error: unknown } | { kind: "complete-early" };
}

/** A scripted turn: text, a reply, or a function of what the model was sent. */
export type ScriptedTurn = string | ScriptedReply | ((context: LlmContext, callIndex: number) => string | ScriptedReply);

export interface ScriptedModelOptions {
  /**
   * Schedules events `delay` apart, and stamps the messages with its `now()`. Default for the
   * delays: `asyncScheduler` (real milliseconds); pass the `TestScheduler` in a marble test.
   * Without a scheduler the timestamps are 0.
   */
  scheduler?: SchedulerLike;
  /** Virtual time before each event. 0 (default) emits the whole reply synchronously. */
  delay?: number;
  /** Characters per text delta; default: one delta per word (with its trailing space). */
  chunkSize?: number;
  id?: string;
  provider?: string;
  api?: string;
}

export interface ScriptedModel extends Model {
  /** The contexts the model was called with, in order. */
  readonly calls: LlmContext[];
  /** Each call's `thinkingLevel` option (undefined when the call gave none), in order. */
  readonly thinkingLevels: (ThinkingLevel | undefined)[];
}

/**
 * A `Model` that plays scripted replies as realistic event streams: `start`, per block
 * `*_start`, deltas and `*_end`, then `done` or `error`. Every event carries a new immutable
 * snapshot of the partial message. It honours the abort signal (ends with an aborted message)
 * and answers a call past the script with an error message saying so.
 *
 * @example
 * const model = scriptedModel(["Hello there", { content: [{ type: "toolCall", name: "add", arguments: { a: 1, b: 2 } }] }]);
 */
export function scriptedModel(turns: ScriptedTurn[], options: ScriptedModelOptions = {}): ScriptedModel {
  const calls: LlmContext[] = [];
  const thinkingLevels: (ThinkingLevel | undefined)[] = [];
  const model: ScriptedModel = {
    id: options.id ?? "scripted",
    provider: options.provider ?? "scripted",
    api: options.api ?? "scripted",
    calls,
    thinkingLevels,
    stream(context, { signal, thinkingLevel }) {
      return new Observable<ModelEvent>((subscriber) => {
        const callIndex = calls.length;
        calls.push({ ...context, messages: [...context.messages] });
        thinkingLevels.push(thinkingLevel);
        const turn = turns[callIndex];
        const reply: ScriptedReply =
          turn === undefined
            ? { stopReason: "error", errorMessage: `scriptedModel: no reply scripted for call #${callIndex + 1}` }
            : normalize(typeof turn === "function" ? turn(context, callIndex) : turn);
        const now = () => (options.scheduler ? options.scheduler.now() : 0);
        const events = replyEvents(reply, callIndex, { ...model, timestamp: now() }, options.chunkSize);
        const delay = reply.delay ?? options.delay ?? 0;
        let index = 0;
        let lastPartial: AssistantMessage | undefined;
        const emitNext = (): boolean => {
          if (signal.aborted) {
            const aborted = { ...(lastPartial ?? events.base), stopReason: "aborted" as const, errorMessage: "Request was aborted" };
            subscriber.next({ type: "error", reason: "aborted", error: aborted });
            subscriber.complete();
            return false;
          }
          const event = events.list[index++];
          if (event === undefined) {
            subscriber.complete();
            return false;
          }
          const final = event.type === "done" || event.type === "error";
          // A failure replaces the final event: the loop must never see done or error then.
          if (final && reply.failure) {
            if (reply.failure.kind === "observable-error") subscriber.error(reply.failure.error);
            else subscriber.complete();
            return false;
          }
          if ("partial" in event) lastPartial = event.partial;
          subscriber.next(event);
          if (final) {
            subscriber.complete();
            return false;
          }
          return true;
        };
        if (delay === 0) {
          while (!subscriber.closed && emitNext());
          return undefined;
        }
        return (options.scheduler ?? asyncScheduler).schedule(function () {
          if (emitNext()) this.schedule(undefined, delay);
        }, delay);
      });
    },
  };
  return model;
}

function normalize(turn: string | ScriptedReply): ScriptedReply {
  return typeof turn === "string" ? { content: [{ type: "text", text: turn }] } : turn;
}

function replyEvents(
  reply: ScriptedReply,
  callIndex: number,
  identity: { id: string; provider: string; api: string; timestamp: number },
  chunkSize: number | undefined,
): { base: AssistantMessage; list: ModelEvent[] } {
  const blocks = reply.content ?? [];
  const hasToolCalls = blocks.some((block) => block.type === "toolCall");
  const stopReason = reply.stopReason ?? (hasToolCalls ? "toolUse" : "stop");
  const base: AssistantMessage = {
    role: "assistant",
    content: [],
    api: identity.api,
    provider: identity.provider,
    model: identity.id,
    usage: usageOf(reply.usage),
    stopReason,
    timestamp: identity.timestamp,
  };
  const list: ModelEvent[] = [];
  // The blocks are shared between the partials (each keeps the blocks it saw): a copy of the
  // content per event made a reply of n tool calls cost n² copies (8,000 calls: GC 67% of the run).
  const content = new SharedContent<AssistantMessage["content"][number]>();
  let partial = base;
  const snapshot = () => (partial = content.snapshotInto({ ...base }));
  list.push({ type: "start", partial });
  blocks.forEach((block, blockIndex) => {
    if (block.type === "text") {
      const contentIndex = content.push({ type: "text", text: "" });
      list.push({ type: "text_start", contentIndex, partial: snapshot() });
      let text = "";
      for (const delta of chunk(block.text, chunkSize)) {
        text += delta;
        content.set(contentIndex, { type: "text", text });
        list.push({ type: "text_delta", contentIndex, delta, partial: snapshot() });
      }
      content.close(contentIndex);
      list.push({ type: "text_end", contentIndex, content: text, partial });
    } else if (block.type === "thinking") {
      const contentIndex = content.push({ type: "thinking", thinking: "" });
      list.push({ type: "thinking_start", contentIndex, partial: snapshot() });
      let thinking = "";
      for (const delta of chunk(block.thinking, chunkSize)) {
        thinking += delta;
        content.set(contentIndex, { type: "thinking", thinking });
        list.push({ type: "thinking_delta", contentIndex, delta, partial: snapshot() });
      }
      content.close(contentIndex);
      list.push({ type: "thinking_end", contentIndex, content: thinking, partial });
    } else {
      const id = block.id ?? `call_${callIndex + 1}_${blockIndex + 1}`;
      const contentIndex = content.push({ type: "toolCall", id, name: block.name, arguments: {} });
      list.push({ type: "toolcall_start", contentIndex, partial: snapshot() });
      // jsonText, not JSON.stringify: a script may hold arguments nested past the stack's reach, to see the loop refuse them.
      list.push({ type: "toolcall_delta", contentIndex, delta: jsonText(block.arguments), partial });
      const toolCall = { type: "toolCall" as const, id, name: block.name, arguments: block.arguments };
      content.set(contentIndex, toolCall);
      content.close(contentIndex);
      list.push({ type: "toolcall_end", contentIndex, toolCall, partial: snapshot() });
    }
  });
  // The final message has a plain content array, as transcripts keep it.
  const final: AssistantMessage = { ...base, content: content.toArray() };
  if (stopReason === "error" || stopReason === "aborted") {
    list.push({ type: "error", reason: stopReason, error: { ...final, errorMessage: reply.errorMessage ?? "Scripted error" } });
  } else {
    list.push({ type: "done", reason: stopReason, message: final });
  }
  return { base, list };
}

function chunk(text: string, chunkSize: number | undefined): string[] {
  if (text === "") return [];
  if (chunkSize !== undefined) {
    const chunks: string[] = [];
    for (let index = 0; index < text.length; index += chunkSize) chunks.push(text.slice(index, index + chunkSize));
    return chunks;
  }
  return text.match(/\s*\S+\s*/g) ?? [text];
}

function usageOf(usage: ScriptedReply["usage"]): Usage {
  const full = { ...emptyUsage(), ...usage };
  if (usage?.totalTokens === undefined) full.totalTokens = full.input + full.output + full.cacheRead + full.cacheWrite;
  return full;
}
