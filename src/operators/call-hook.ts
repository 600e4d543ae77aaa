import { defer, Observable } from "rxjs";
import type { HookResult } from "../types.js";
import { fromHookResult } from "./from-hook-result.js";

/**
 * Calls a hook lazily, on subscribe, and emits its one result.
 *
 * A throw, a rejection or an Observable error all arrive as the Observable's error, so callers
 * handle every failure in one `catchError`. Unsubscribing before the call means it never happens.
 */
export function callHook<TArguments extends unknown[], TResult>(
  hook: (...args: TArguments) => HookResult<TResult>,
  ...args: TArguments
): Observable<TResult> {
  return defer(() => fromHookResult(hook(...args)));
}
