import { concatMap, defer, endWith, filter, firstValueFrom, ignoreElements, map, type Observable, of, take, throwIfEmpty } from "rxjs";
import { InvalidStateError } from "../errors.js";
import type { AgentEvent, AgentMessage, AgentState } from "../types.js";

/**
 * What `Agent.run` resolves with: the messages the run added, an array as before, carrying the
 * structured `output` (typed from the Agent's `output` schema) or the `outputError` saying why
 * there is none, as `agent_end` has them.
 * @example const { output } = await agent.run("Weather in Paris?"); // { city: "Paris", temperature: 21 }
 */
export type RunMessages<TOutput = unknown> = AgentMessage[] & { output?: TOutput; outputError?: string };

/** A run as `messagesAtEnd` follows it: its events, and when its `subscribe` listeners are done (none: at once). */
export interface StartedRun<TOutput> {
  events: Observable<AgentEvent<unknown, TOutput>>;
  listenersSettled: Observable<void> | undefined;
}

/**
 * The messages a run added, once it ends and its `subscribe` listeners are done with it
 * (`Agent.run`): where a run's events become a Promise for `await`. `start` is called on
 * subscription, so its throw (a run already active) rejects.
 *
 * Contract: rejects with an `InvalidStateError` when the events complete without `agent_end`
 * (`reset` or `dispose` stopped the run).
 */
export function messagesAtEnd<TOutput>(start: () => StartedRun<TOutput>): Promise<RunMessages<TOutput>> {
  return firstValueFrom(
    defer(() => {
      const run = start();
      return run.events.pipe(
        filter((event) => event.type === "agent_end"),
        map((event): RunMessages<TOutput> => {
          const messages: RunMessages<TOutput> = [...event.messages];
          if (event.output !== undefined) messages.output = event.output;
          if (event.outputError !== undefined) messages.outputError = event.outputError;
          return messages;
        }),
        concatMap((messages) => afterSettled(run.listenersSettled, messages)),
      );
    }).pipe(throwIfEmpty(() => new InvalidStateError("The run was stopped by reset() or dispose() before it ended."))),
  );
}

/**
 * Resolves at the first state of `state$` (which replays the current one) in which `isIdle`
 * holds, once `listenersSettled()` (asked then) completes (`Agent.waitForIdle`); at once when
 * `state$` completes first (the agent was disposed).
 */
export function firstIdle(state$: Observable<AgentState>, isIdle: (state: AgentState) => boolean, listenersSettled: () => Observable<void>): Promise<void> {
  return firstValueFrom(
    state$.pipe(
      filter(isIdle),
      take(1),
      concatMap(() => afterSettled(listenersSettled(), undefined)),
    ),
    { defaultValue: undefined },
  );
}

/** `value` once `settled` completes, or at once without it. */
function afterSettled<TValue>(settled: Observable<void> | undefined, value: TValue): Observable<TValue> {
  return settled ? settled.pipe(ignoreElements(), endWith(value)) : of(value);
}
