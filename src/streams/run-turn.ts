import { catchError, map, Observable, type Observer, of, race, type Subscriber, Subscription, take } from "rxjs";
import { callHook } from "../operators/call-hook.js";
import { executeToolCalls } from "../operators/execute-tool-calls.js";
import { forwardingObserver } from "../operators/forwarding-observer.js";
import { ToolBatchSummary } from "../operators/tool-batch.js";
import { isFailedMessage, toolCallsOf } from "../types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ToolResultMessage } from "../types.js";
import { agentEnd, appendMessage, newMessages, type RunState, TurnContinuation } from "./run-state.js";
import { streamAssistant } from "./stream-assistant.js";

/**
 * One turn: inject pending messages, call the model, run its tool calls, `turn_end`, and decide.
 *
 * The first turn's `turn_start` belongs to the run's opening (before the prompts), and it takes
 * its pending messages from the steering queue, so steering typed before the first call lands
 * in it. It ends in one of two ways: with `agent_end`, or by handing `continuation` the
 * messages the next turn starts with (then completing it) just before it completes itself.
 *
 * `opening` is emitted first: the run's opening events, for the first turn.
 *
 * Why one Observable with its steps in sequence rather than `concat` of deferred parts: a turn
 * runs for every tool round trip, and each `concat` and `defer` costs subscriptions per turn and
 * a hop per event; here each step is one subscription, started when the step before completes.
 */
export function runTurn(
  run: RunState,
  pending: AgentMessage[] | undefined,
  continuation: Observer<TurnContinuation>,
  opening?: readonly AgentEvent[],
): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const turn: TurnSteps = { run, subscriber, continuation, steps: new Subscription() };
    const { steps } = turn;
    if (opening) for (const event of opening) subscriber.next(event);
    // Before draining: steering drained for a turn that will not run would be lost.
    if (subscriber.closed) return steps;
    const first = pending === undefined;
    const injected = first ? run.steering.drain(run.config.steeringMode ?? "one-at-a-time") : pending;
    if (!first) subscriber.next({ type: "turn_start" });
    for (const message of injected) {
      appendMessage(run, message);
      announceTo(subscriber, message);
    }
    if (subscriber.closed) return steps;
    let assistant: AssistantMessage | undefined;
    steps.add(
      streamAssistant(run).subscribe(
        forwardingObserver(subscriber, {
          next: (event: AgentEvent) => {
            if (event.type === "message_end") {
              assistant = event.message as AssistantMessage;
              appendMessage(run, assistant);
            }
            subscriber.next(event);
          },
          complete: () => finishTurn(turn, assistant!),
        }),
      ),
    );
    return steps;
  });
}

/** What the steps of one turn share. */
interface TurnSteps {
  readonly run: RunState;
  readonly subscriber: Subscriber<AgentEvent>;
  readonly continuation: Observer<TurnContinuation>;
  /** Every step's subscription, torn down with the turn. */
  readonly steps: Subscription;
}

/**
 * After the assistant message: its tool calls, `turn_end`, then the decision.
 *
 * Why check `closed` before each step: a step that completes synchronously runs the next one
 * before its own subscription is linked to the turn's, so a subscriber that left meanwhile is
 * seen only there.
 */
function finishTurn(turn: TurnSteps, assistant: AssistantMessage): void {
  const { run, subscriber, steps } = turn;
  if (subscriber.closed) return;
  const failed = isFailedMessage(assistant);
  const toolCalls = failed ? [] : toolCallsOf(assistant);
  if (toolCalls.length === 0) {
    endTurn(turn, assistant, [], false, failed);
    return;
  }
  let summary: ToolBatchSummary | undefined;
  steps.add(
    // The run has every field the batch needs.
    executeToolCalls(assistant, toolCalls, run).subscribe(
      forwardingObserver(subscriber, {
        next: (output: AgentEvent | ToolBatchSummary) => {
          if (output instanceof ToolBatchSummary) summary = output;
          else subscriber.next(output);
        },
        complete: () => {
          // A batch emits its summary last, just before it completes.
          const { results, terminate } = summary!;
          for (const result of results) appendMessage(run, result);
          endTurn(turn, assistant, results, !terminate, false);
        },
      }),
    ),
  );
}

/**
 * Emits `turn_end`, then decides: stop (error, abort, `maxTurns`, `shouldStopAfterTurn`), go on
 * with the tool results or steering, or start another inner loop with follow-ups.
 *
 * Decides only once `turn_end` is out: a listener may abort as it hears it.
 */
function endTurn(turn: TurnSteps, assistant: AssistantMessage, toolResults: ToolResultMessage[], moreToolWork: boolean, failed: boolean): void {
  const { run, subscriber, continuation, steps } = turn;
  if (subscriber.closed) return;
  subscriber.next({ type: "turn_end", message: assistant, toolResults });
  if (subscriber.closed) return;
  run.turns += 1;
  const { config } = run;
  const decide = (stop: boolean) => {
    const next = stop ? agentEnd(run) : nextTurn(run, moreToolWork);
    if (next instanceof TurnContinuation) continuation.next(next);
    else subscriber.next(next);
    continuation.complete();
    subscriber.complete();
  };
  if (failed || run.cancellation.aborted || (config.signal?.aborted ?? false)) {
    decide(true);
    return;
  }
  if (config.maxTurns !== undefined && run.turns >= config.maxTurns) {
    decide(true);
    return;
  }
  if (!config.shouldStopAfterTurn) {
    decide(false);
    return;
  }
  steps.add(
    race(
      callHook(config.shouldStopAfterTurn, { message: assistant, toolResults, context: run.context, newMessages: newMessages(run) }).pipe(
        map((stop) => stop === true),
        catchError(() => of(true)),
      ),
      run.abort$.pipe(map(() => true)),
    )
      .pipe(take(1))
      .subscribe(forwardingObserver(subscriber, { next: decide })),
  );
}

/** What follows a turn that did not stop: steering or tool results, then follow-ups, else the end. */
function nextTurn(run: RunState, moreToolWork: boolean): AgentEvent | TurnContinuation {
  const { config } = run;
  const steering = run.steering.drain(config.steeringMode ?? "one-at-a-time");
  if (steering.length > 0 || moreToolWork) return new TurnContinuation(steering);
  const followUps = run.followUp.drain(config.followUpMode ?? "one-at-a-time");
  if (followUps.length > 0) return new TurnContinuation(followUps);
  return agentEnd(run);
}

function announceTo(subscriber: Subscriber<AgentEvent>, message: AgentMessage): void {
  subscriber.next({ type: "message_start", message });
  subscriber.next({ type: "message_end", message });
}
