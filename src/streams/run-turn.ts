import { map, Observable, type Observer, race, type Subscriber, type Subscription, take, type Unsubscribable } from "rxjs";
import { HookError, RxAgentError } from "../errors.js";
import { callHook } from "../operators/call-hook.js";
import { executeToolCalls } from "../operators/tool-calls/execute-tool-calls.js";
import { forwardingObserver } from "../operators/forwarding-observer.js";
import { ToolBatchSummary } from "../operators/tool-calls/tool-batch.js";
import { truncatedToolCalls } from "../operators/tool-calls/truncated-tool-calls.js";
import { isFailedMessage, toolCallsOf } from "../types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage } from "../types.js";
import { agentEndEvent, drain, endBeforeHook, type HookAnswer, nextStep, type NextStep, type NextTurnStep, type TurnOutcome, type TurnStart } from "./next-step.js";
import { appendMessage, newMessages, type RunState } from "./run-state.js";
import { EagerToolCalls } from "./eager-tool-calls.js";
import { prepareFirstTurn, prepareNextTurn } from "./prepare-next-turn.js";
import { streamAssistant } from "./stream-assistant.js";

/** What a turn emits: its events, and last, when the run goes on, its decision to go on. */
export type TurnOutput = AgentEvent | NextTurnStep;

/**
 * One turn: inject pending messages, call the model, run its tool calls, `turn_end`, and decide.
 *
 * The first turn emits the run's opening events first (`agent_start`, its `turn_start`, the
 * prompts), and it takes its pending messages from the steering queue, so steering typed before
 * the first call lands in it. Before its model call a turn asks `prepareFirstTurn` (the first)
 * or `prepareNextTurn` (the others), when there is one. A turn ends in one of two ways: with
 * `agent_end`, or with its decision to go on, a `next_turn` step, as its last value
 * (the loop's `expand`, in `playTurns`, starts the next turn from it).
 *
 * Why one Observable with its steps in sequence rather than `concat` of deferred parts: a turn
 * runs for every tool round trip, and each `concat` and `defer` costs subscriptions per turn and
 * a hop per event; here each step is one subscription, started when the step before completes.
 * Measured against an operator version (`concat`, `defer`, `concatMap`, `filter`, `finalize`
 * per step; agent-loop and run-turn specs green) with bench/ab.ts, medians of 5 rounds in one
 * process, load 12-14, 2026-12-02: heap per waiting session (W5) 3,343 B hand-built against
 * 6,768 B; CPU per tool call against the reference 0.647x against 0.799x (W2 value tools) and
 * 0.696x against 0.808x (W2 Promise tools).
 */
export function runTurn(run: RunState, start: TurnStart): Observable<TurnOutput> {
  return new Observable<TurnOutput>((subscriber) => {
    const turn = new TurnSteps(run, subscriber);
    const { steps } = turn;
    const first = start.type === "first_turn";
    if (first) {
      for (const event of start.opening) subscriber.next(event);
    }
    if (!(first ? run.config.prepareFirstTurn : run.config.prepareNextTurn)) {
      beginTurn(turn, start);
      return steps;
    }
    steps.add(
      (first ? prepareFirstTurn(run) : prepareNextTurn(run)).subscribe(
        forwardingObserver(subscriber, {
          next: (prepared: HookError | readonly AgentMessage[]) => (prepared instanceof HookError ? beginTurn(turn, start, prepared) : beginTurn(turn, start, undefined, prepared)),
        }),
      ),
    );
    return steps;
  });
}

/**
 * Injects the turn's pending messages (`turn_start` first, unless it is the first turn), then
 * calls the model. `failure`: what the model call must end with instead (a prepare hook, or a
 * steering queue that threw: the run then ends as data, with a failed assistant message).
 * `appended`: what a prepare hook asked to append, injected before the pending messages.
 */
function beginTurn(turn: TurnSteps, start: TurnStart, failure?: RxAgentError, appended: readonly AgentMessage[] = []): void {
  const { run, subscriber, steps } = turn;
  // Before draining: steering drained for a turn that will not run would be lost.
  if (subscriber.closed) return;
  const first = start.type === "first_turn";
  let injected = first ? [] : start.pending;
  // The first turn takes steering typed before the first call. Steering typed while
  // prepareNextTurn ran (it may compact for a while) joins a next turn, as in the reference;
  // only when none was pending, so one-at-a-time still injects one.
  if (first || (injected.length === 0 && run.config.prepareNextTurn)) {
    const steering = drain(run.steering, run.config.steeringMode, "steering", run.config);
    if (Array.isArray(steering)) injected = steering;
    else failure ??= new RxAgentError(steering.errorMessage!);
  }
  if (!first) subscriber.next({ type: "turn_start" });
  for (const message of appended) {
    appendMessage(run, message);
    emitMessageEvents(subscriber, message);
  }
  for (const message of injected) {
    appendMessage(run, message);
    emitMessageEvents(subscriber, message);
  }
  if (subscriber.closed) return;
  turn.eager = EagerToolCalls.forTurn(run);
  if (turn.eager) steps.add(turn.eager);
  turn.modelCall = streamAssistant(run, turn, failure);
  steps.add(turn.modelCall);
}

/**
 * What the steps of one turn share, and the observer of its model call's message events.
 *
 * Why the turn's own object observes the model call, and not a forwardingObserver with two
 * closures: a run waiting for its model holds it, and the observer, its handlers, closures and
 * array of finalizers were about 500 bytes of that (bench W5, heap per waiting session); and
 * every model event took one call more (W1). Its handlers cannot reach rxjs's unhandled-error
 * path: the model call's observer catches what they throw into `error` (see streamAssistant).
 */
class TurnSteps implements Observer<AgentEvent> {
  /** Every step's subscription, torn down with the turn. */
  readonly steps: Subscription;
  eager: EagerToolCalls | undefined;
  modelCall: Unsubscribable | undefined;
  private assistant: AssistantMessage | undefined;

  constructor(
    readonly run: RunState,
    readonly subscriber: Subscriber<TurnOutput>,
  ) {
    // The subscriber itself holds the steps: a Subscription of their own (and its array of
    // finalizers) per turn was a tenth of what a run waiting for its model holds (bench W5).
    this.steps = subscriber;
  }

  next(event: AgentEvent): void {
    if (event.type === "message_end") {
      this.assistant = event.message as AssistantMessage;
      appendMessage(this.run, this.assistant);
    }
    this.subscriber.next(event);
    if (this.eager && event.type === "message_update" && event.assistantMessageEvent.type === "toolcall_end") {
      this.eager.arrive(event.assistantMessageEvent.toolCall, event.message);
    }
  }

  error(error: unknown): void {
    this.subscriber.error(error);
  }

  /** The assistant message ended: the model call is released before the turn goes on. */
  complete(): void {
    this.modelCall?.unsubscribe();
    finishTurn(this, this.assistant!, this.eager);
  }
}

/**
 * After the assistant message: its tool calls, `turn_end`, then the decision.
 *
 * Why check `closed` before each step: a step that completes synchronously runs the next one
 * before its own subscription is linked to the turn's, so a subscriber that left meanwhile is
 * seen only there.
 */
function finishTurn(turn: TurnSteps, assistant: AssistantMessage, eager: EagerToolCalls | undefined): void {
  const { run, subscriber, steps } = turn;
  if (subscriber.closed) return;
  const toolCalls = isFailedMessage(assistant) ? [] : toolCallsOf(assistant);
  // A message cut off by the token limit may hold calls whose arguments validate yet are cut.
  const truncated = assistant.stopReason === "length";
  // Calls started early for a message that failed or was cut: stopped, and answered as without eager execution.
  const early$ = eager && toolCalls.length > 0 && !truncated ? eager.batchFor(assistant, toolCalls) : undefined;
  if (eager && early$ === undefined) eager.unsubscribe();
  if (toolCalls.length === 0) {
    endTurn(turn, { message: assistant, toolResults: [], terminated: false });
    return;
  }
  const batch$ = early$ ?? (truncated ? truncatedToolCalls(toolCalls, run.scheduler) : executeToolCalls(assistant, toolCalls, run));
  // The run has every field the batch needs.
  steps.add(batch$.subscribe(forwardingObserver(subscriber, new BatchHandlers(turn, assistant))));
}

/**
 * What the turn does with its tool batch's outputs: passes the events on, keeps the summary, and
 * ends the turn with it. Why a class and not two closures: one object instead of three and a
 * context per batch (bench W5 allocates per session).
 */
class BatchHandlers {
  private summary: ToolBatchSummary | undefined;

  constructor(
    private readonly turn: TurnSteps,
    private readonly assistant: AssistantMessage,
  ) {}

  next(output: AgentEvent | ToolBatchSummary): void {
    if (output instanceof ToolBatchSummary) this.summary = output;
    else this.turn.subscriber.next(output);
  }

  complete(): void {
    // A batch emits its summary last, just before it completes.
    const { results, terminate, failure } = this.summary!;
    for (const result of results) appendMessage(this.turn.run, result);
    endTurn(this.turn, { message: this.assistant, toolResults: results, terminated: terminate, failure });
  }
}

/**
 * Emits `turn_end`, then decides (`nextStep`), asking `shouldStopAfterTurn` first unless the
 * run ends before it (`endBeforeHook`). An abort while the hook thinks wins at once.
 *
 * Decides only once `turn_end` is out: a listener may abort as it hears it.
 */
function endTurn(turn: TurnSteps, outcome: TurnOutcome): void {
  const { run, subscriber, steps } = turn;
  if (subscriber.closed) return;
  subscriber.next({ type: "turn_end", message: outcome.message, toolResults: outcome.toolResults });
  if (subscriber.closed) return;
  run.turns += 1;
  const { shouldStopAfterTurn } = run.config;
  if (run.config.prepareNextTurn) run.lastTurn = outcome;
  if (!shouldStopAfterTurn || endBeforeHook(run, outcome)) {
    decide(turn, nextStep(run, outcome));
    return;
  }
  const { message, toolResults } = outcome;
  steps.add(
    race(
      callHook(shouldStopAfterTurn, { message, toolResults, context: run.context, newMessages: newMessages(run) }).pipe(
        map((stop): HookAnswer => stop === true),
      ),
      // The abort is seen by nextStep itself.
      run.abort$.pipe(map((): HookAnswer => false)),
    )
      .pipe(take(1))
      .subscribe(
        forwardingObserver(subscriber, {
          next: (answer: HookAnswer) => decide(turn, nextStep(run, outcome, answer)),
          error: (error: unknown) => decide(turn, nextStep(run, outcome, { error })),
        }),
      ),
  );
}

/** Hands the decision on as the turn's last value: another turn, or `agent_end`; then completes. */
function decide({ run, subscriber }: TurnSteps, step: NextStep): void {
  if (step.type === "end") {
    run.ended = true;
    subscriber.next(agentEndEvent(run, step));
  } else {
    subscriber.next(step);
  }
  subscriber.complete();
}

/** A message's `message_start` and `message_end`, emitted (not collected as `messageEventsOf` does: no array per message). */
function emitMessageEvents(subscriber: Subscriber<TurnOutput>, message: AgentMessage): void {
  subscriber.next({ type: "message_start", message });
  subscriber.next({ type: "message_end", message });
}
