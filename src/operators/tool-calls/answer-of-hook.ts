import { catchError, map, type Observable, of, race } from "rxjs";
import type { HookResult } from "../../types.js";
import { fromHookResult, isPendingHookResult } from "../from-hook-result.js";
import type { BatchInterruption } from "./tool-batch.js";

/** How a tool-call hook's answer becomes an outcome: from the answer, a failure, or an interruption. */
export interface HookOutcomes<Answer, Outcome> {
  answered(answer: Answer | undefined): Outcome;
  failed(error: unknown): Outcome;
  interrupted(reason: string): Outcome;
}

/**
 * Calls a tool-call hook (`beforeToolCall`, `afterToolCall`) and turns its answer into an outcome.
 *
 * An answer given as a plain value, or a throw, comes back as the outcome itself, synchronously;
 * one given as a Promise or an Observable comes back as an Observable of one outcome, which the
 * batch's interruption (abort, steering) wins if it comes first, so nobody waits on a hook that a
 * person may never answer; so does `cancelled$` (the call's own cancel), when given.
 */
export function answerOfHook<Answer, Outcome>(
  call: () => HookResult<Answer | undefined>,
  outcomes: HookOutcomes<Answer, Outcome>,
  interruption: BatchInterruption,
  cancelled$?: Observable<string>,
): Outcome | Observable<Outcome> {
  let answer: HookResult<Answer | undefined>;
  let pending: boolean;
  try {
    answer = call();
    // Telling a Promise or an Observable from a value reads the answer (`then`, `instanceof`):
    // one that throws as it is read (a revoked Proxy) is the hook's failure, not the run's.
    pending = isPendingHookResult(answer);
  } catch (error) {
    return outcomes.failed(error);
  }
  // `pending` is isPendingHookResult's answer, kept from inside the try: a plain value here.
  if (!pending) return outcomes.answered(answer as Answer | undefined);
  return race(
    (cancelled$ ? race(interruption.reason$, cancelled$) : interruption.reason$).pipe(map((reason) => outcomes.interrupted(reason))),
    fromHookResult(answer).pipe(
      map((value) => outcomes.answered(value)),
      catchError((error: unknown) => of(outcomes.failed(error))),
    ),
  );
}
