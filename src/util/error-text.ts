/**
 * The readable message of anything thrown. Never throws itself: it runs in the handlers that
 * turn a failure into an error result or message, where a throw of its own would become an
 * unhandled rejection (which ends a Node process) or be lost inside rxjs (a run that never
 * ends). What a tool, a hook or a peer throws may be a Proxy whose every trap throws, an Error
 * whose `message` is a throwing getter or not a string, or an object whose `toJSON` and
 * `toString` throw.
 */
export function errorText(error: unknown): string {
  try {
    if (error instanceof Error) {
      const message: unknown = error.message;
      return typeof message === "string" ? message : valueText(message);
    }
    return typeof error === "string" ? error : valueText(error);
  } catch {
    return UNREADABLE_ERROR_TEXT;
  }
}

/** What `errorText` says of a thrown value that cannot be read at all. */
export const UNREADABLE_ERROR_TEXT = "an error that could not be read as text";

function valueText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
