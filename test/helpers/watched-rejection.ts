/**
 * A thenable that records whether a rejection handler was given to its `then`: what keeps a
 * rejected Promise from reaching Node's unhandled-rejection path, which ends the process. For the
 * hooks that must answer synchronously (src/util/synchronous-answer.ts).
 */
export function watchedRejection(): { thenable: PromiseLike<never>; handled: () => boolean } {
  let handled = false;
  const thenable: PromiseLike<never> = {
    then(_onFulfilled?: unknown, onRejected?: unknown) {
      if (typeof onRejected === "function") handled = true;
      return thenable as never;
    },
  };
  return { thenable, handled: () => handled };
}
