import { errorText } from "./util/error-text.js";

export { errorText };

/** Base of every error rxagent throws, so apps can tell them apart with `instanceof`. */
export class RxAgentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A call that cannot work with the given state, e.g. continuing from an assistant message. */
export class InvalidStateError extends RxAgentError {}

/**
 * A run or an `Agent` was given a config that cannot work (a missing model, a bad
 * `maxConcurrency`, two tools with one name, prompts that are not an array). Thrown at once, when
 * the run or the `Agent` is created, never from inside a subscriber.
 */
export class InvalidConfigError extends RxAgentError {
  constructor(
    /** The config field at fault, e.g. `"model"` or `"tools[2].name"`. */
    readonly field: string,
    problem: string,
  ) {
    super(`Invalid ${field}: ${problem}`);
  }
}

/** A hook (transformContext, convertToLlm, ...) threw or failed. */
export class HookError extends RxAgentError {
  constructor(
    readonly hookName: string,
    cause: unknown,
  ) {
    super(`${hookName} failed: ${errorText(cause)}`, { cause });
  }
}
