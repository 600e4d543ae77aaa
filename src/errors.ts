/** Base of every error rxagent throws, so apps can tell them apart with `instanceof`. */
export class RxAgentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A call that cannot work with the given state, e.g. continuing from an assistant message. */
export class InvalidStateError extends RxAgentError {}

/** A hook (transformContext, convertToLlm, ...) threw or failed. */
export class HookError extends RxAgentError {
  constructor(
    readonly hookName: string,
    cause: unknown,
  ) {
    super(`${hookName} failed: ${errorText(cause)}`, { cause });
  }
}

/** The readable message of anything thrown. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
