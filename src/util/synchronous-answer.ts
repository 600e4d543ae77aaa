import { isPromiseLike } from "./is-promise-like.js";

/**
 * `answer` as it is, when it is not a Promise (or another thenable); otherwise throws, after
 * giving the Promise a rejection handler. For a hook whose contract is to answer synchronously
 * (`prepareArguments`, `convertMessageToLlm`, a `stopWhen` condition): each caller turns the
 * throw into its usual failure naming the hook.
 *
 * Why: an `async` hook's Promise was taken as its answer (arguments, a message, a condition that
 * does not hold) and never read, so its rejection reached Node's unhandled-rejection path, which
 * ends the process.
 */
export function synchronousAnswer<T>(answer: T): T {
  if (!isPromiseLike(answer)) return answer;
  try {
    answer.then(undefined, ignoreRejection);
  } catch {
    // A thenable whose `then` throws holds no rejection to handle.
  }
  throw new Error("it returned a Promise, and it must answer synchronously");
}

function ignoreRejection(): void {}
