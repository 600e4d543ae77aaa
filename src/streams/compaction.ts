import { asyncScheduler, map, Observable, of, type SchedulerLike } from "rxjs";
import { InvalidConfigError } from "../errors.js";
import { describe } from "../model/check-model-message.js";
import { callHook } from "../operators/call-hook.js";
import { isAssistantMessage, roleOf } from "../types/messages.js";
import type { AgentContext, AgentMessage, AssistantMessage, CompactionSummaryMessage, HookResult, Model, PrepareFirstTurnContext, PrepareNextTurnContext, PrepareNextTurnResult } from "../types.js";
import { jsonText } from "../util/json-text.js";
import { compactedMessages, compactedWindow, summaryForModel } from "./compacted-messages.js";
import { summarizeWithModel } from "./summarize-with-model.js";
import { errorText } from "../util/error-text.js";

/** A function that summarizes messages: the text that will stand for them. */
export type Summarizer = (messages: readonly AgentMessage[], signal: AbortSignal) => HookResult<string>;

export interface CompactionOptions {
  /**
   * The budget of one model call's input, in tokens. Before each model call, its input is
   * estimated (the last call's reported usage, its answer included, plus about a token per four
   * characters of the messages after it); past the budget, older messages are summarized.
   */
  maxInputTokens: number;
  /** How many of the latest messages stay word for word (more when a tool call's results would be split from it). Default 8. */
  keepRecent?: number;
  /** A `Model` to ask for the summary (with `instructions`), or a function that writes it. */
  summarize: Model | Summarizer;
  /** With a model: its system prompt (default `SUMMARY_INSTRUCTIONS`). */
  instructions?: string;
  /** Stamps the summary's `timestamp`. Default: `asyncScheduler`. */
  scheduler?: SchedulerLike;
}

/** The hooks compaction plugs into; spread them into a loop config or an `Agent`'s options. */
export interface Compaction {
  prepareFirstTurn: (context: PrepareFirstTurnContext) => Observable<PrepareNextTurnResult | undefined>;
  prepareNextTurn: (context: PrepareNextTurnContext) => Observable<PrepareNextTurnResult | undefined>;
  transformContext: (messages: AgentMessage[]) => AgentMessage[];
}

/**
 * Keeps a long session within a token budget: when the next call's input would pass
 * `maxInputTokens`, the messages before the `keepRecent` latest are summarized, and the summary
 * (a `CompactionSummaryMessage`) is appended to the transcript before that call. From then on
 * the model sees the summary, the kept messages and what follows (`compactedMessages`).
 *
 * Intuition: the transcript stays whole and append-only, so an `Agent`, its store and every UI
 * see the summary as one more message (`message_end` with role `"compactionSummary"`), and a
 * session reopened from any store continues from it. A tool call and its results are never split.
 *
 * Contract: checked before every model call: a run's first (`prepareFirstTurn`, after its
 * prompts, which are never summarized) and each next (`prepareNextTurn`). A summarizer that fails
 * or answers no text ends the run with `prepareFirstTurn failed: compaction …` (or
 * `prepareNextTurn failed: …`); the transcript loses nothing. Aborting while it works fires its signal.
 * @example new Agent({ model, ...compaction({ maxInputTokens: 100_000, keepRecent: 10, summarize: smallModel }) })
 */
export function compaction(options: CompactionOptions): Compaction {
  const { maxInputTokens, keepRecent = 8, instructions, scheduler = asyncScheduler } = options;
  if (typeof maxInputTokens !== "number" || !(maxInputTokens > 0)) throw new InvalidConfigError("maxInputTokens", `compaction needs a positive token budget, got ${String(maxInputTokens)}.`);
  if (!Number.isInteger(keepRecent) || keepRecent < 0) throw new InvalidConfigError("keepRecent", `must be an integer of 0 or more, got ${String(keepRecent)}.`);
  const summarize = summarizerOf(options.summarize, instructions);
  /** The summary to append before the next call, if it would pass the budget; `keepFrom`: the first message that must stay word for word. */
  const compact = (context: AgentContext, lastAnswer: AssistantMessage | undefined, keepFrom: number): Observable<PrepareNextTurnResult | undefined> => {
    const { messages } = context;
    const window = compactedWindow(messages);
    const estimate = estimateInputTokens(context, lastAnswer, window.summary, window.indices);
    if (estimate <= maxInputTokens) return of(undefined);
    const cut = cutBefore(messages, window.indices, keepRecent, keepFrom);
    if (cut === 0) return of(undefined);
    const older = window.indices.slice(0, cut).map((index) => messages[index]!);
    const summarized = window.summary ? [window.summary as unknown as AgentMessage, ...older] : older;
    const firstKept = window.indices[cut] ?? messages.length;
    return summarizeOnce(summarize, summarized).pipe(
      map((summary): PrepareNextTurnResult => {
        const message: CompactionSummaryMessage = { role: "compactionSummary", summary, keptMessages: messages.length - firstKept, tokensBefore: estimate, timestamp: scheduler.now() };
        // A custom message: AgentMessage holds the app's own roles only once merged in (see CompactionSummaryMessage).
        return { append: [message as unknown as AgentMessage] };
      }),
    );
  };
  return {
    transformContext: compactedMessages,
    // A run's first call: the last answer is the previous run's, and the prompts after it stay.
    prepareFirstTurn: ({ context, newMessages }) => {
      const firstNew = Math.max(0, context.messages.length - newMessages.length);
      return compact(context, lastAnswerBefore(context.messages, firstNew), firstNew);
    },
    prepareNextTurn: ({ context, message }) => compact(context, message, context.messages.length),
  };
}

function summarizerOf(summarize: Model | Summarizer, instructions: string | undefined): Summarizer {
  if (typeof summarize === "function") return summarize;
  if (typeof summarize === "object" && summarize !== null && typeof summarize.stream === "function") return summarizeWithModel(summarize, instructions);
  throw new InvalidConfigError("summarize", `must be a Model or a function (messages, signal) => summary, got ${describe(summarize)}.`);
}

/**
 * The summarizer's text, with a signal of its own that fires if the run leaves before it answered
 * (an abort: `prepareNextTurn` races it), as rxjs's `fromFetch` does.
 */
function summarizeOnce(summarize: Summarizer, messages: readonly AgentMessage[]): Observable<string> {
  return new Observable<string>((subscriber) => {
    const controller = new AbortController();
    let settled = false;
    const subscription = callHook(summarize, messages, controller.signal).subscribe({
      next: (summary: unknown) => {
        settled = true;
        if (typeof summary !== "string" || summary.trim() === "") subscriber.error(new Error(`compaction's summarizer answered ${typeof summary === "string" ? "an empty text" : describe(summary)}, not a summary text`));
        else subscriber.next(summary);
      },
      error: (error: unknown) => {
        settled = true;
        subscriber.error(new Error(`compaction's summarizer failed: ${errorText(error)}`, { cause: error }));
      },
      complete: () => subscriber.complete(),
    });
    return () => {
      subscription.unsubscribe();
      if (!settled) controller.abort(new Error("The run ended while compaction summarized."));
    };
  });
}

/**
 * The next call's input, estimated: the last call's reported tokens (what it read and wrote)
 * plus the messages after its answer; without a report (a model that gives none, or no answer
 * yet), every message the model sees.
 */
function estimateInputTokens(context: AgentContext, lastAnswer: AssistantMessage | undefined, summary: CompactionSummaryMessage | undefined, indices: readonly number[]): number {
  const { messages } = context;
  const usage = lastAnswer?.usage;
  const reported = usage ? usage.input + usage.cacheRead + usage.cacheWrite + usage.output : 0;
  const answerAt = lastAnswer === undefined ? -1 : messages.lastIndexOf(lastAnswer as AgentMessage);
  if (reported > 0 && answerAt !== -1) {
    let total = reported;
    for (let index = answerAt + 1; index < messages.length; index++) total += estimateTokens(messages[index]!);
    return total;
  }
  let total = estimateText(context.systemPrompt ?? "") + (summary ? estimateTokens(summaryForModel(summary)) : 0);
  for (const index of indices) total += estimateTokens(messages[index]!);
  return total;
}

function lastAnswerBefore(messages: readonly AgentMessage[], end: number): AssistantMessage | undefined {
  for (let index = end - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (isAssistantMessage(message)) return message;
  }
  return undefined;
}

/** About a token per four characters of the message as JSON: rough, and on the safe side for prose. */
function estimateTokens(message: AgentMessage): number {
  return estimateText(jsonText(message));
}

function estimateText(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * How many of the window's messages go into the summary: all but the `keepRecent` latest, and
 * none from `keepFrom` on (a run's prompts), moved back so the first kept message is not a tool
 * result (its call stays with it).
 */
function cutBefore(messages: readonly AgentMessage[], indices: readonly number[], keepRecent: number, keepFrom: number): number {
  let cut = Math.max(0, indices.length - keepRecent);
  while (cut > 0 && indices[cut - 1]! >= keepFrom) cut--;
  while (cut > 0 && cut < indices.length && roleOf(messages[indices[cut]!]) === "toolResult") cut--;
  return cut;
}
