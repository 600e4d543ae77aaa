import { asyncScheduler, concat, isObservable, Observable, Subscription } from "rxjs";
import { InvalidStateError } from "../errors.js";
import { isAssistantMessage, isModelMessage } from "../types/messages.js";
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, DrainableQueue, OutputOf, OutputSchema } from "../types.js";
import { checkConfig, checkContext, checkPrompts } from "./check-config.js";
import { checkedPrefix, takeLentTranscript } from "./transcript/checked-transcripts.js";
import { fromAbortSignal } from "./from-abort-signal.js";
import { LazyAbortController } from "../util/lazy-abort-controller.js";
import { jsonDepthOf } from "../util/json-depth.js";
import { MessageQueue, noMessages } from "./message-queue.js";
import { playTurns } from "./play-turns.js";
import { appendMessage, messageEventsOf, type RunState } from "./run-state.js";
import { lastTurnStart, pairToolCalls } from "./transcript/repair-transcript.js";
import type { ReopenedToolCalls } from "./transcript/reopened-tool-calls.js";
import { resumeToolCalls } from "./resume-tool-calls.js";
import { RunTeardown } from "./run-teardown.js";
import { runTurn } from "./run-turn.js";
import { EndOnFailure } from "./end-on-failure.js";
import { reserveFinalizerSlots } from "../operators/finalizer-slot.js";
import { withOutput } from "./structured-output.js";

/**
 * Runs an agent from new prompt messages: a cold Observable of the run's events.
 *
 * Each subscription is one run on its own copy of the transcript: `agent_start`, a first turn
 * that opens with the prompts, more turns while there are tool results or steering, more inner
 * loops while follow-ups are queued, and `agent_end` with every message the run added.
 * Unsubscribing tears everything down at once: the model request, running tools, timers.
 * With `config.output`, the run ends on a validated final answer, typed from the schema in
 * `agent_end.output` (see `withOutput`).
 *
 * Contract: throws an `InvalidConfigError` at once for a config that cannot work (see
 * `checkConfig`: no model, a bad `maxConcurrency`, duplicate tool names, prompts not an array;
 * `checkContext`: a context without a messages array, tools that are not an array).
 *
 * @example
 * agentLoop([{ role: "user", content: "Hi", timestamp: 0 }], { messages: [] }, { model })
 *   .subscribe((event) => console.log(event.type));
 */
export function agentLoop<TOutputSchema extends OutputSchema = OutputSchema>(
  prompts: AgentMessage[],
  context: AgentContext,
  config: Omit<AgentLoopConfig, "output"> & { output?: TOutputSchema },
): Observable<AgentEvent<unknown, OutputOf<TOutputSchema>>> {
  checkContext(context, "agentLoop");
  checkConfig(config, context.tools, "agentLoop");
  checkPrompts(prompts, "agentLoop", jsonDepthOf(config));
  return observed(config, withOutput(context, config, (runContext, runConfig) => runLoop(prompts, runContext, runConfig))) as Observable<AgentEvent<unknown, OutputOf<TOutputSchema>>>;
}

/**
 * Resumes a run from an existing transcript without a new message (e.g. to retry).
 *
 * Contract: the transcript must not be empty and must not end with an assistant message; it
 * throws an `InvalidStateError` at once otherwise, and an `InvalidConfigError` as `agentLoop` does.
 */
export function agentLoopContinue<TOutputSchema extends OutputSchema = OutputSchema>(
  context: AgentContext,
  config: Omit<AgentLoopConfig, "output"> & { output?: TOutputSchema },
): Observable<AgentEvent<unknown, OutputOf<TOutputSchema>>> {
  checkContext(context, "agentLoopContinue");
  checkConfig(config, context.tools, "agentLoopContinue");
  const last = context.messages[context.messages.length - 1];
  if (last === undefined) {
    throw new InvalidStateError("Cannot continue: no messages in context. Start a run with agentLoop and a prompt.");
  }
  if (isAssistantMessage(last)) {
    throw new InvalidStateError(
      "Cannot continue from message role: assistant: add a user message or tool results first, or start a new run with agentLoop.",
    );
  }
  return observed(config, withOutput(context, config, (runContext, runConfig) => runLoop([], runContext, runConfig))) as Observable<AgentEvent<unknown, OutputOf<TOutputSchema>>>;
}

/**
 * Reopens a run that a process stopped while tool calls waited for approval (`Agent.open`): its
 * first turn opens with the reopened calls, which wait again and run once approved
 * (`resumeToolCalls`), then their results in call order; then it calls the model as any turn does.
 */
export function agentLoopReopened(reopened: ReopenedToolCalls, context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  checkContext(context, "Agent.open");
  checkConfig(config, context.tools, "Agent.open");
  return observed(config, withOutput(context, config, (runContext, runConfig) => runLoop([], runContext, runConfig, reopened)));
}

/** The run through `config.observeRun`, when there is one. */
function observed(config: Pick<AgentLoopConfig, "observeRun">, run: Observable<AgentEvent>): Observable<AgentEvent> {
  return config.observeRun ? run.pipe(config.observeRun) : run;
}

/**
 * The policy, after each turn's `turn_end` (`endTurn` in run-turn.ts; the order is `nextStep`'s):
 * 1. a failed model call, a failing queue or an abort ends the run     (`endBeforeHook`)
 * 2. `maxTurns` reached, or a `stopWhen` condition that holds, ends it   (`endBeforeHook`)
 * 3. `shouldStopAfterTurn` is asked; "stop" ends it                      (`endTurn`, then `nextStep`)
 * 4. steering, or tool results that do not terminate: another turn     (`nextStep`)
 * 5. else follow-ups: another inner loop                               (`nextStep`)
 * 6. else `agent_end`, with the reason of whichever step ended the run  (`decide`, `agentEndEvent`)
 * A next turn asks `prepareNextTurn` before its `turn_start` (`runTurn`, prepare-next-turn.ts).
 *
 * The mechanism: an `expand` over turns (`playTurns`). Each turn (`runTurn`) emits its events
 * and, last, its decision as a value: a `next_turn` step (N), on which `expand` recurses to start
 * the next turn once the turn has completed, or `agent_end`, after which the turns complete:
 *
 * ```text
 * T1:      agent_start … turn_end N|                    (T1 decided next_turn, just before completing)
 * T2:                               turn_start … turn_end agent_end|   (T2 decided end)
 * output:  agent_start … turn_end   turn_start … turn_end agent_end|
 * ```
 */
function runLoop(prompts: AgentMessage[], context: AgentContext, config: AgentLoopConfig, reopened?: ReopenedToolCalls): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const steering = queueFrom(config.steering);
    const followUp = queueFrom(config.followUp);
    const scheduler = config.scheduler ?? asyncScheduler;
    // Before any model call: a tool call without a result anywhere makes providers refuse it.
    const answeredFirst = reopened?.calls.map((call) => call.toolCall.id);
    const lentPrefix = takeLentTranscript(context.messages);
    const checked = lentPrefix ?? checkedPrefix(context.messages);
    const paired = pairToolCalls(context.messages, scheduler.now(), prompts, answeredFirst, checked?.paired ?? 0);
    // A lent transcript is worked on as it is; a repaired one, or any other, on a copy.
    const lent = paired === undefined ? lentPrefix : undefined;
    const messages = paired ?? (lent ? context.messages : [...context.messages]);
    let modelMessagesSeen = 0;
    if (checked !== undefined && paired === undefined) {
      checked.paired = lastTurnStart(messages, checked.paired);
      if (config.convertMessageToLlm === undefined) {
        while (checked.modelMessages < messages.length && isModelMessage(messages[checked.modelMessages]!)) checked.modelMessages += 1;
        modelMessagesSeen = checked.modelMessages;
      }
    }
    const run: RunState = {
      config,
      scheduler,
      context: { ...context, messages },
      lent,
      firstNewMessage: messages.length,
      carriedNewMessages: undefined,
      lastTurn: undefined,
      steering: steering.queue,
      followUp: followUp.queue,
      ownsQueues: steering.source === undefined && followUp.source === undefined ? NO_OWNED_QUEUES : { steering: steering.source !== undefined, followUp: followUp.source !== undefined },
      cancellation: new LazyAbortController(),
      abort$: fromAbortSignal(config.signal),
      toolDeadlines: undefined,
      turns: 0,
      converted: undefined,
      modelMessagesSeen,
      ended: false,
      toolCallIds: undefined,
    };

    const teardown = new RunTeardown(run, config.signal);

    const opening: AgentEvent[] = [{ type: "agent_start" }, { type: "turn_start" }];
    for (const prompt of prompts) {
      appendMessage(run, prompt);
      opening.push(...messageEventsOf(prompt));
    }
    // The expand over turns: each turn once the turn before completed, trampolined, so a model
    // that answers synchronously does not nest every turn inside the previous one's call stack.
    const allTurns$ = playTurns(run, { type: "first_turn", opening: reopened ? [] : opening }, runTurn);
    // A reopened run's first turn opens with the reopened calls, before its model call.
    const turns$ = reopened ? concat(opening, resumeToolCalls(run, reopened), allTurns$) : allTurns$;
    // The queues' sources are subscribed beside the turns, not merged into them: the turns
    // complete right after `agent_end` on their own, and no event passes through a merge.
    // The subscriber itself holds them, not a Subscription of their own: one object and one
    // array of finalizers fewer per run (bench W5, heap per waiting run).
    // The subscriber's finalizers: the queues' sources, the turns (EndOnFailure) and the teardown.
    reserveFinalizerSlots(subscriber, (steering.source ? 1 : 0) + (followUp.source ? 1 : 0) + 2);
    feed(steering, subscriber);
    feed(followUp, subscriber);
    turns$.subscribe(new EndOnFailure(run, subscriber));
    return teardown;
  });
}

/** A run's queue, and the Observable the run fills it from when the run made it. */
type QueueBinding = { queue: DrainableQueue; source?: undefined } | { queue: MessageQueue; source: Observable<AgentMessage> };

// Shared by the runs that give no queue or own none (most): per run they were two objects more.
const NO_QUEUE: QueueBinding = { queue: noMessages };
const NO_OWNED_QUEUES: RunState["ownsQueues"] = { steering: false, followUp: false };

function queueFrom(input: Observable<AgentMessage> | DrainableQueue | undefined): QueueBinding {
  if (input === undefined) return NO_QUEUE;
  if (isObservable(input)) return { queue: new MessageQueue(), source: input };
  return { queue: input };
}

/** Keeps a queue filled from its source for the run's lifetime; a failing source is dropped. */
function feed(binding: QueueBinding, subscription: Subscription): void {
  const { source, queue } = binding;
  if (!source) return;
  subscription.add(source.subscribe({ next: (message) => queue.push(message), error: () => undefined }));
}
