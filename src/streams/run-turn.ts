import { catchError, concat, concatMap, defer, filter, map, type Observable, of, race, take, tap } from "rxjs";
import { callHook } from "../operators/call-hook.js";
import { executeToolCalls } from "../operators/execute-tool-calls.js";
import { ToolBatchSummary } from "../operators/tool-batch.js";
import { toolCallsOf } from "../types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ToolResultMessage } from "../types.js";
import { agentEnd, announce, appendMessage, type RunState, TurnContinuation } from "./run-state.js";
import { streamAssistant } from "./stream-assistant.js";

/** What a turn emits: its events, and last either `agent_end` or a `TurnContinuation`. */
export type TurnOutput = AgentEvent | TurnContinuation;

/**
 * One turn: inject pending messages, call the model, run its tool calls, `turn_end`, and decide.
 *
 * The first turn's `turn_start` belongs to the run's opening (before the prompts), and it takes
 * its pending messages from the steering queue, so steering typed before the first call lands
 * in it. The last value says what comes next: another turn, or the end of the run.
 */
export function runTurn(run: RunState, pending: AgentMessage[] | undefined): Observable<TurnOutput> {
  return defer(() => {
    const first = pending === undefined;
    const injected = first ? run.steering.drain(run.config.steeringMode ?? "one-at-a-time") : pending;
    const opening: AgentEvent[] = first ? [] : [{ type: "turn_start" }];
    for (const message of injected) {
      appendMessage(run, message);
      opening.push(...announce(message));
    }
    let assistant: AssistantMessage | undefined;
    return concat(
      opening,
      streamAssistant(run).pipe(
        tap((event) => {
          if (event.type === "message_end") {
            assistant = event.message as AssistantMessage;
            appendMessage(run, assistant);
          }
        }),
      ),
      defer(() => finishTurn(run, assistant!)),
    );
  });
}

function finishTurn(run: RunState, assistant: AssistantMessage): Observable<TurnOutput> {
  const failed = assistant.stopReason === "error" || assistant.stopReason === "aborted";
  const toolCalls = failed ? [] : toolCallsOf(assistant);
  if (toolCalls.length === 0) {
    return concat(
      of<AgentEvent>({ type: "turn_end", message: assistant, toolResults: [] }),
      defer(() => decideNext(run, assistant, [], false, failed)),
    );
  }
  let summary = new ToolBatchSummary([], false);
  const batch$ = executeToolCalls(assistant, toolCalls, {
    context: run.context,
    config: run.config,
    scheduler: run.scheduler,
    signal: run.signal,
    abort$: run.abort$,
    steering: run.steering,
  }).pipe(
    filter((output): output is AgentEvent => {
      if (output instanceof ToolBatchSummary) {
        summary = output;
        return false;
      }
      return true;
    }),
  );
  return concat(
    batch$,
    defer(() => {
      for (const result of summary.results) appendMessage(run, result);
      return concat(
        of<AgentEvent>({ type: "turn_end", message: assistant, toolResults: summary.results }),
        defer(() => decideNext(run, assistant, summary.results, !summary.terminate, false)),
      );
    }),
  );
}

/**
 * After `turn_end`: stop (error, abort, `maxTurns`, `shouldStopAfterTurn`), go on with the tool
 * results or steering, or start another inner loop with follow-ups.
 *
 * Call it deferred, once `turn_end` is out: a listener may abort as it hears `turn_end`.
 */
function decideNext(
  run: RunState,
  assistant: AssistantMessage,
  toolResults: ToolResultMessage[],
  moreToolWork: boolean,
  failed: boolean,
): Observable<TurnOutput> {
  run.turns += 1;
  const { config } = run;
  if (failed || run.signal.aborted || (config.signal?.aborted ?? false)) {
    return of(agentEnd(run));
  }
  const shouldStop$: Observable<boolean> =
    config.maxTurns !== undefined && run.turns >= config.maxTurns
      ? of(true)
      : config.shouldStopAfterTurn
        ? race(
            callHook(config.shouldStopAfterTurn, {
              message: assistant,
              toolResults,
              context: run.context,
              newMessages: run.newMessages,
            }).pipe(
              map((stop) => stop === true),
              catchError(() => of(true)),
            ),
            run.abort$.pipe(map(() => true)),
          ).pipe(take(1))
        : of(false);
  return shouldStop$.pipe(
    concatMap((stop): Observable<TurnOutput> => {
      if (stop) return of(agentEnd(run));
      const steering = run.steering.drain(config.steeringMode ?? "one-at-a-time");
      if (steering.length > 0 || moreToolWork) return of(new TurnContinuation(steering));
      const followUps = run.followUp.drain(config.followUpMode ?? "one-at-a-time");
      if (followUps.length > 0) return of(new TurnContinuation(followUps));
      return of(agentEnd(run));
    }),
  );
}
