import {
  AsyncSubject,
  defer,
  finalize,
  groupBy,
  ignoreElements,
  merge,
  mergeMap,
  Subject,
  type Observable,
  type OperatorFunction,
} from "rxjs";

/** A value's share of the concurrency: values with the same key run at most `cap` at once. */
export interface ConcurrencyCap {
  key: string;
  cap: number;
}

/**
 * Like `mergeMap(project, limit)`, where values may also belong to a group with a cap of its own.
 *
 * Emits the projected values as they come. A value starts when both its group has room and the
 * global `limit` has room. Why gate per group before the global `mergeMap`: a value waiting for
 * its group must not hold one of the global slots that another group could use.
 *
 * @example
 * calls$.pipe(mergeMapCapped(run, 8, (call) => call.tool.concurrency ? { key: call.tool.name, cap: call.tool.concurrency } : undefined))
 */
export function mergeMapCapped<T, R>(
  project: (value: T) => Observable<R>,
  limit: number,
  capOf: (value: T) => ConcurrencyCap | undefined,
): OperatorFunction<T, R> {
  return (source) =>
    defer(() => {
      const released = new Subject<{ value: T; done: AsyncSubject<void> }>();
      const caps = new Map<string, number>();
      const gate$ = source.pipe(
        groupBy((value) => {
          const cap = capOf(value);
          if (!cap) return undefined;
          caps.set(cap.key, cap.cap);
          return cap.key;
        }),
        mergeMap((group) =>
          group.pipe(
            mergeMap(
              (value) => {
                const done = new AsyncSubject<void>();
                released.next({ value, done });
                return done;
              },
              group.key === undefined ? Infinity : (caps.get(group.key) ?? Infinity),
            ),
          ),
        ),
      );
      const run$ = released.pipe(
        mergeMap(({ value, done }) => project(value).pipe(finalize(() => done.complete())), limit),
      );
      return merge(run$, gate$.pipe(ignoreElements(), finalize(() => released.complete())));
    });
}
