import { from, isObservable, Observable, of, takeLast, defaultIfEmpty } from "rxjs";
import type { HookResult } from "../types.js";

/**
 * Turns what a hook returned into an Observable of one value.
 *
 * A plain value is emitted synchronously, a Promise when it settles, an Observable's last value
 * when it completes (`undefined` when it completes empty). Arrays are plain values here, unlike
 * in `from`, because hooks such as `convertToLlm` return arrays as their value.
 */
export function fromHookResult<T>(result: HookResult<T>): Observable<T> {
  if (isObservable(result)) {
    return result.pipe(takeLast(1), defaultIfEmpty(undefined as T));
  }
  if (isPromiseLike(result)) {
    return from(result);
  }
  return of(result);
}

function isPromiseLike<T>(value: HookResult<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
