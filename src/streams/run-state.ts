import type { Observable, SchedulerLike } from "rxjs";
import { isModelMessage } from "../types/messages.js";
import type { CheckedPrefix } from "./transcript/checked-transcripts.js";
import { ConvertedMessages } from "./transcript/convert-each-message.js";
import type { LazyAbortController } from "../util/lazy-abort-controller.js";
import type { ToolDeadlines } from "../operators/tool-calls/tool-deadlines.js";
import type { CallIdTable } from "../model/call-id-table.js";
import type {
  AgentContext,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AssistantMessage,
  ConvertMessageToLlm,
  DrainableQueue,
  Message,
  ToolResultMessage,
} from "../types.js";

/**
 * The mutable bookkeeping of one subscription to a loop. Each subscription gets its own, so the
 * loop Observable stays cold and re-subscribable.
 */
export interface RunState {
  /** Replaced (not changed) when `prepareNextTurn` gives another model. */
  config: AgentLoopConfig;
  readonly scheduler: SchedulerLike;
  /**
   * The run's own copy of the transcript; the caller's array is never changed. Or the `Agent`'s
   * transcript itself, lent to the run (`lent`).
   */
  readonly context: AgentContext;
  /**
   * What is known of the owner's transcript while the run works on it itself (`lendTranscript`):
   * the owner appends the run's messages, and the model messages carry over to the next run.
   * Undefined for a run on its own copy, and once `prepareNextTurn` replaced the transcript.
   */
  lent: CheckedPrefix | undefined;
  /**
   * Where the run's own messages start in the transcript: `agent_end` reports every message from
   * there on. Why an index and not a second array: a long session would pay a slot per message.
   */
  firstNewMessage: number;
  /**
   * The run's messages from before `prepareNextTurn` replaced the transcript, if it did:
   * `agent_end` still reports them.
   */
  carriedNewMessages: AgentMessage[] | undefined;
  /** The turn that ended last, for `prepareNextTurn` (kept only when it is configured). */
  lastTurn: { message: AssistantMessage; toolResults: ToolResultMessage[] } | undefined;
  readonly steering: DrainableQueue;
  readonly followUp: DrainableQueue;
  /**
   * Which queues' leftovers are the run's to report: those it made. A queue the caller passed
   * stays the caller's; reporting its messages too would hand them out twice.
   */
  readonly ownsQueues: { readonly steering: boolean; readonly followUp: boolean };
  /** The run's abort (its signal is handed to hooks): on abort, and when the subscriber leaves mid-run. */
  readonly cancellation: LazyAbortController;
  /** Emits when `config.signal` aborts. */
  readonly abort$: Observable<void>;
  /**
   * The time limits of the calls of all the run's batches, one timer for the run (made by the
   * first call with a limit; tool-deadlines.ts), cancelled as the run ends (run-teardown.ts).
   */
  toolDeadlines: ToolDeadlines | undefined;
  turns: number;
  /**
   * The transcript's model messages so far, kept up to date as it grows, so the default
   * `convertToLlm` (or `convertMessageToLlm`) costs each message once rather than once per turn.
   * Undefined while every message of the transcript is a model message and there is no
   * `convertMessageToLlm`: the transcript itself is that list then.
   */
  converted: ConvertedMessages | undefined;
  /** Without `convertMessageToLlm`: how many transcript messages are known to be model messages. */
  modelMessagesSeen: number;
  /** Set as `agent_end` is emitted: from then on, leaving is not an abort. */
  ended: boolean;
  /**
   * The tool-call ids of the run's messages so far, made at its first call: a model that repeats
   * one in a later message gets it renamed (`settledModelMessage`).
   */
  toolCallIds: CallIdTable | undefined;
}

/**
 * The transcript's model messages (the default `convertToLlm`, or `convertMessageToLlm`'s
 * answers): the run's own array, brought up to date, not a copy (see `LlmContext.messages`).
 * While the transcript holds only model messages and there is no conversion, that array is the
 * transcript itself; the first other message forks a list of its own.
 * Throws a `HookError` when `convertMessageToLlm` fails.
 */
export function currentModelMessages(run: RunState): readonly Message[] {
  const { messages } = run.context;
  const convert = run.config.convertMessageToLlm;
  if (run.converted === undefined && convert === undefined) {
    let index = run.modelMessagesSeen;
    while (index < messages.length && isModelMessage(messages[index]!)) index++;
    run.modelMessagesSeen = index;
    if (index === messages.length) return messages as Message[];
  }
  run.converted ??= convertedFor(run.lent, convert);
  return run.converted.update(messages);
}

/** A lent transcript's model messages carried from the last run (made anew for another `convert`), or a new list. */
function convertedFor(lent: CheckedPrefix | undefined, convert: ConvertMessageToLlm | undefined): ConvertedMessages {
  if (lent === undefined) return new ConvertedMessages(convert);
  if (lent.converted === undefined || lent.converted.convert !== convert) lent.converted = new ConvertedMessages(convert);
  return lent.converted;
}

/** Adds a message to the transcript, unless the transcript is lent: its owner appends it then. */
export function appendMessage(run: RunState, message: AgentMessage): void {
  if (run.lent === undefined) run.context.messages.push(message);
}

/** Every message the run added so far, as a new array. */
export function newMessages(run: RunState): AgentMessage[] {
  const added = run.context.messages.slice(run.firstNewMessage);
  return run.carriedNewMessages ? run.carriedNewMessages.concat(added) : added;
}

/** A message's `message_start` and `message_end`. */
export function messageEventsOf(message: AgentMessage): AgentEvent[] {
  return [
    { type: "message_start", message },
    { type: "message_end", message },
  ];
}
