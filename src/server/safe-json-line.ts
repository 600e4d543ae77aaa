import { safeJson } from "../util/repaired-json.js";

/**
 * One message as a JSON line, also when part of it cannot be serialised as it is.
 *
 * `JSON.stringify` throws on a BigInt and on a cycle, which a tool's `details` may well hold;
 * skipping the message would leave a tool call without its result in the middle of the file.
 * Such values are stored in a safe form instead: a BigInt as its decimal digits (a string), a
 * reference back to an enclosing object as `"[Circular]"`, and what even that cannot write (a
 * `toJSON` or getter that throws) as `"[unwritable: <why>]"` (`safeJson`). `repaired` tells
 * whether that was needed, for a warning.
 */
export function safeJsonLine(value: unknown): { line: string; repaired: boolean } {
  try {
    return { line: `${JSON.stringify(value)}\n`, repaired: false };
  } catch (error) {
    // A value nested past the stack's reach (a caller's own `append`; the loop refuses such
    // values, see `maxJsonDepth`) cannot be repaired: say so rather than throw a RangeError.
    if (error instanceof RangeError) throw new RangeError(`Not stored: the value cannot be written as JSON (${error.message}); values nested deeper than maxJsonDepth are refused by the loop.`);
    return { line: `${safeJson(value)}\n`, repaired: true };
  }
}
