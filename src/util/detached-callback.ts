import { errorText } from "./error-text.js";
import { isPromiseLike } from "./is-promise-like.js";

/**
 * Calls a user's callback whose answer nothing waits for (`onSessionClose`, `onChatClose`,
 * `onToolsChanged`, `onFailure`, `onWarning` itself), and hands its failure to `report` as
 * `<name> failed: <error>`.
 *
 * Why: thrown, the failure broke the caller's work (an eviction refused the next session, a
 * shutdown left the rest of its sessions unreported); returned as a rejected Promise, it was an
 * unhandled rejection, which ends a Node process.
 */
export function callDetached<Args extends unknown[]>(
  name: string,
  callback: ((...args: Args) => unknown) | undefined,
  args: Args,
  report: (message: string) => void,
): void {
  if (callback === undefined) return;
  const failed = (error: unknown): void => report(`${name} failed: ${errorText(error)}`);
  try {
    const answer = callback(...args);
    if (isPromiseLike(answer)) answer.then(undefined, failed);
  } catch (error) {
    failed(error);
  }
}

/** Warnings to the console, where a user gave no `onWarning`. */
export function warnToConsole(message: string): void {
  console.warn(`rxagent: ${message}`);
}

/**
 * The warning function for an `onWarning` option: `onWarning` when given, else the console. One
 * that throws or rejects does not break the work that warned: the warning and its failure go to
 * the console.
 */
export function warnerOf(onWarning: ((message: string) => void) | undefined): (message: string) => void {
  if (onWarning === undefined) return warnToConsole;
  return (message) =>
    callDetached("onWarning", onWarning, [message], (failure) => {
      warnToConsole(message);
      warnToConsole(failure);
    });
}
