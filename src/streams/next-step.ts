import { errorText } from "../errors.js";
import { isFailedMessage } from "../types/messages.js";
import type { AgentEndReason, AgentEvent, AgentMessage, AssistantMessage, DrainableQueue, QueuedMessages, QueueMode, StopCondition, StopConditionContext, ToolResultMessage, Usage } from "../types.js";
import { runUsage } from "../model/run-usage.js";
import { newMessages, type RunState } from "./run-state.js";
import { jsonDepthOf, nestsDeeperThan, tooDeepText } from "../util/json-depth.js";
import { synchronousAnswer } from "../util/synchronous-answer.js";
import { markQueued } from "./queued-from.js";
import { problemOfMessageShape } from "./check-config.js";

/** What a turn decides: another turn that starts with `pending`, or the end of the run, and why. */
export type NextStep = NextTurnStep | EndStep;
export interface NextTurnStep {
  readonly type: "next_turn";
  readonly pending: AgentMessage[];
}
export interface EndStep {
  readonly type: "end";
  readonly reason: AgentEndReason;
  /** What failed, when no failed assistant message says it. */
  readonly errorMessage?: string;
  /** With reason `"stop_condition"`: the condition that held. */
  readonly stopCondition?: string;
}

/** How a turn starts: the run's first, with the run's opening events, or one a turn decided on. */
export type TurnStart = { readonly type: "first_turn"; readonly opening: readonly AgentEvent[] } | NextTurnStep;

/** What a turn leaves to decide on. */
export interface TurnOutcome {
  readonly message: AssistantMessage;
  readonly toolResults: ToolResultMessage[];
  /** Every result of the turn's tool batch asked to terminate. */
  readonly terminated: boolean;
  /** Why the turn's own machinery failed (a queue of the caller's threw), if it did. */
  readonly failure?: string;
}

/** `shouldStopAfterTurn`'s answer: `true` to stop, or the error it failed with. */
export type HookAnswer = boolean | { readonly error: unknown };

/**
 * The checks that come before `shouldStopAfterTurn`, in order: a failure, an abort, `maxTurns`,
 * the `stopWhen` conditions. Undefined when none ends the run: then the hook is asked, if there is one.
 */
export function endBeforeHook(run: RunState, outcome: TurnOutcome): EndStep | undefined {
  if (outcome.failure !== undefined) return { type: "end", reason: "failed", errorMessage: outcome.failure };
  if (run.cancellation.aborted || (run.config.signal?.aborted ?? false)) return ENDS.aborted;
  if (isFailedMessage(outcome.message)) return outcome.message.stopReason === "aborted" ? ENDS.aborted : ENDS.failed;
  const { maxTurns } = run.config;
  if (maxTurns !== undefined && run.turns >= maxTurns) return ENDS.max_turns;
  return run.config.stopWhen === undefined ? undefined : stopConditionEnd(run, run.config.stopWhen, outcome);
}

/**
 * The end the first `stopWhen` condition that holds asks for, in array order; or a failure
 * naming the condition that threw (a predicate's bug must not let the run go on unchecked).
 */
function stopConditionEnd(run: RunState, stopWhen: StopCondition | readonly StopCondition[], outcome: TurnOutcome): EndStep | undefined {
  const conditions = typeof stopWhen === "function" ? [stopWhen] : stopWhen;
  const context = new ConditionContext(run, outcome);
  for (const [index, condition] of conditions.entries()) {
    try {
      if (synchronousAnswer(condition(context)) === true) return { type: "end", reason: "stop_condition", stopCondition: conditionName(condition, stopWhen, index) };
    } catch (error) {
      return { type: "end", reason: "failed", errorMessage: `The stop condition ${conditionName(condition, stopWhen, index)} failed: ${errorText(error)}` };
    }
  }
  return undefined;
}

function conditionName(condition: StopCondition, stopWhen: StopCondition | readonly StopCondition[], index: number): string {
  return condition.description ?? (condition.name || (typeof stopWhen === "function" ? "stopWhen" : `stopWhen[${index}]`));
}

/** What a condition sees; the run's messages and usage are gathered only if a condition reads them. */
class ConditionContext implements StopConditionContext {
  readonly turns: number;
  readonly message: AssistantMessage;
  readonly toolResults: readonly ToolResultMessage[];

  constructor(
    private readonly run: RunState,
    outcome: TurnOutcome,
  ) {
    this.turns = run.turns;
    this.message = outcome.message;
    this.toolResults = outcome.toolResults;
  }

  get newMessages(): readonly AgentMessage[] {
    return newMessages(this.run);
  }

  get usage(): Usage {
    return runUsage(newMessages(this.run));
  }
}

/**
 * Decides what follows a turn, in this order: the checks of `endBeforeHook`; the hook's answer
 * (`hookAnswer`, once asked); another turn with steering, or with the tool results unless they
 * terminate; another inner loop with follow-ups; else the end. Drains the queue it takes from.
 */
export function nextStep(run: RunState, outcome: TurnOutcome, hookAnswer?: HookAnswer): NextStep {
  const early = endBeforeHook(run, outcome);
  if (early) return early;
  if (hookAnswer === true) return ENDS.stopped_by_hook;
  if (typeof hookAnswer === "object") {
    return { type: "end", reason: "failed", errorMessage: `shouldStopAfterTurn failed: ${errorText(hookAnswer.error)}` };
  }
  const { config } = run;
  const steering = drain(run.steering, config.steeringMode, "steering", config);
  if (!Array.isArray(steering)) return steering;
  const moreToolWork = outcome.toolResults.length > 0 && !outcome.terminated;
  if (steering.length > 0 || moreToolWork) return { type: "next_turn", pending: steering };
  const followUps = drain(run.followUp, config.followUpMode, "follow-up", config);
  if (!Array.isArray(followUps)) return followUps;
  if (followUps.length > 0) return { type: "next_turn", pending: followUps };
  return outcome.terminated ? ENDS.terminated : ENDS.idle;
}

/**
 * A queue's next messages, or the end of the run when the caller's queue throws or hands out a
 * value that is not a message: nested deeper than `maxJsonDepth` (the transcript, the wire and
 * the stores would overflow the stack writing it out), not a message at all (a number, no role:
 * it went into the transcript as it was), or one that cannot be read (a getter that throws). An
 * `Agent`'s own queues were checked on `steer` and `followUp`; this catches a caller's queue or
 * Observable given to `agentLoop`.
 */
export function drain(queue: DrainableQueue, mode: QueueMode | undefined, name: "steering" | "follow-up", config: { readonly maxJsonDepth?: number }): AgentMessage[] | EndStep {
  let messages: AgentMessage[];
  try {
    messages = queue.drain(mode ?? "one-at-a-time");
  } catch (error) {
    return { type: "end", reason: "failed", errorMessage: `The ${name} queue failed: ${errorText(error)}` };
  }
  if (messages.length === 0) return messages;
  const limit = jsonDepthOf(config);
  for (let index = 0; index < messages.length; index++) {
    const problem = problemOfQueued(messages[index], limit);
    if (problem !== undefined) return { type: "end", reason: "failed", errorMessage: `The ${name} queue gave a message ${problem}; what it gave was not added.` };
  }
  markQueued(messages, name === "steering" ? "steering" : "followUp");
  return messages;
}

/** What keeps a queued value out of the transcript, as the end of "a message …", or undefined for a message. */
function problemOfQueued(message: unknown, limit: number): string | undefined {
  try {
    if (nestsDeeperThan(message, limit)) return `whose values ${tooDeepText(limit)}`;
    const problem = problemOfMessageShape(message);
    return problem === undefined ? undefined : `that ${problem}`;
  } catch (error) {
    return `that could not be read (${errorText(error)})`;
  }
}

// One object per reason, not one per run: the ends without an error message carry nothing else.
const ENDS: Readonly<Record<AgentEndReason, EndStep>> = {
  failed: { type: "end", reason: "failed" },
  aborted: { type: "end", reason: "aborted" },
  max_turns: { type: "end", reason: "max_turns" },
  stop_condition: { type: "end", reason: "stop_condition" },
  stopped_by_hook: { type: "end", reason: "stopped_by_hook" },
  terminated: { type: "end", reason: "terminated" },
  idle: { type: "end", reason: "idle" },
};

/**
 * The closing event of a run for `end`, with whatever is still queued when the run made the
 * queues. Why only those: a queue the run made is the run's own `MessageQueue`, which cannot throw.
 */
export function agentEndEvent(run: RunState, end: EndStep): AgentEvent {
  const messages = newMessages(run);
  const event: Extract<AgentEvent, { type: "agent_end" }> = { type: "agent_end", messages, reason: end.reason };
  if (end.errorMessage !== undefined) event.errorMessage = end.errorMessage;
  if (end.stopCondition !== undefined) event.stopCondition = end.stopCondition;
  // Once per run, over the messages it added: a loop over them, nothing kept between events.
  event.usage = runUsage(messages);
  const queued: QueuedMessages = {
    steering: run.ownsQueues.steering ? [...run.steering.peek()] : [],
    followUp: run.ownsQueues.followUp ? [...run.followUp.peek()] : [],
  };
  if (queued.steering.length > 0 || queued.followUp.length > 0) {
    event.queued = queued;
  }
  return event;
}
