import type { Observable, SchedulerLike } from "rxjs";
import { isModelMessage } from "../types/messages.js";
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, DrainableQueue, Message, QueuedMessages } from "../types.js";

/**
 * The mutable bookkeeping of one subscription to a loop. Each subscription gets its own, so the
 * loop Observable stays cold and re-subscribable.
 */
export interface RunState {
  readonly config: AgentLoopConfig;
  readonly scheduler: SchedulerLike;
  /** The run's own copy of the transcript; the caller's array is never changed. */
  readonly context: AgentContext;
  /** Every message the run added, for `agent_end`. */
  readonly newMessages: AgentMessage[];
  readonly steering: DrainableQueue;
  readonly followUp: DrainableQueue;
  /**
   * Which queues' leftovers are the run's to report: those it made. A queue the caller passed
   * stays the caller's; reporting its messages too would hand them out twice.
   */
  readonly ownsQueues: { readonly steering: boolean; readonly followUp: boolean };
  /** Handed to hooks; fires on abort and when the subscriber leaves mid-run. */
  readonly signal: AbortSignal;
  /** Emits when `config.signal` aborts. */
  readonly abort$: Observable<void>;
  turns: number;
  /**
   * The transcript's model messages so far, kept up to date as it grows, so the default
   * `convertToLlm` costs each message once rather than once per turn.
   */
  readonly modelMessages: Message[];
  /** How many transcript messages `modelMessages` has taken in. */
  modelMessagesSeen: number;
  /** Set as `agent_end` is made: from then on, leaving is not an abort. */
  ended: boolean;
}

/**
 * The transcript's model messages (the default `convertToLlm`): the run's own array, brought up
 * to date, not a copy (see `LlmContext.messages`).
 */
export function currentModelMessages(run: RunState): readonly Message[] {
  const { messages } = run.context;
  for (let index = run.modelMessagesSeen; index < messages.length; index++) {
    const message = messages[index]!;
    if (isModelMessage(message)) run.modelMessages.push(message);
  }
  run.modelMessagesSeen = messages.length;
  return run.modelMessages;
}

/** Adds a message to the transcript and to the run's new messages. */
export function appendMessage(run: RunState, message: AgentMessage): void {
  run.context.messages.push(message);
  run.newMessages.push(message);
}

/** The closing event of a run, with whatever is still queued when the run made the queues. */
export function agentEnd(run: RunState): AgentEvent {
  run.ended = true;
  const event: AgentEvent = { type: "agent_end", messages: run.newMessages };
  const queued: QueuedMessages = {
    steering: run.ownsQueues.steering ? [...run.steering.peek()] : [],
    followUp: run.ownsQueues.followUp ? [...run.followUp.peek()] : [],
  };
  if (queued.steering.length > 0 || queued.followUp.length > 0) {
    event.queued = queued;
  }
  return event;
}

/** Emitted by a turn that wants another one; `pending` is injected at its start. */
export class TurnContinuation {
  constructor(readonly pending: AgentMessage[]) {}
}

/** A message's `message_start` and `message_end`. */
export function announce(message: AgentMessage): AgentEvent[] {
  return [
    { type: "message_start", message },
    { type: "message_end", message },
  ];
}
