import { from, isObservable, Observable, of, takeLast, defaultIfEmpty } from "rxjs";
import type { HookResult } from "../types.js";
import { isPromiseLike } from "../util/is-promise-like.js";

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

/**
 * True when a hook's answer must be waited for (a Promise or an Observable); a plain value is
 * used synchronously, without any Observable machinery.
 */
export function isPendingHookResult<T>(result: HookResult<T>): result is PromiseLike<T> | Observable<T> {
  return isObservable(result) || isPromiseLike(result);
}
