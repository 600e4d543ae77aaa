import { defer, filter, firstValueFrom, map, type Observable, throwIfEmpty } from "rxjs";
import { InvalidStateError } from "../errors.js";
import type { AgentEvent, AgentMessage, AgentState } from "../types.js";

/**
 * The messages a run added, once it ends (`Agent.run`): where a run's events become a Promise
 * for `await`. `start` is called on subscription, so its throw (a run already active) rejects.
 *
 * Contract: rejects with an `InvalidStateError` when the events complete without `agent_end`
 * (`reset` or `dispose` stopped the run).
 */
export function messagesAtEnd<TOutput>(start: () => Observable<AgentEvent<unknown, TOutput>>): Promise<AgentMessage[]> {
  return firstValueFrom(
    defer(start).pipe(
      filter((event) => event.type === "agent_end"),
      map((event) => event.messages),
      throwIfEmpty(() => new InvalidStateError("The run was stopped by reset() or dispose() before it ended.")),
    ),
  );
}

/** Resolves at the first state of `state$` (which replays the current one) in which `isIdle` holds (`Agent.waitForIdle`). */
export function firstIdle(state$: Observable<AgentState>, isIdle: (state: AgentState) => boolean): Promise<void> {
  return firstValueFrom(
    state$.pipe(
      filter(isIdle),
      map(() => undefined),
    ),
  );
}
