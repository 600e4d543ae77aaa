/**
 * One message as a JSON line, also when part of it cannot be serialised as it is.
 *
 * `JSON.stringify` throws on a BigInt and on a cycle, which a tool's `details` may well hold;
 * skipping the message would leave a tool call without its result in the middle of the file.
 * Such values are stored in a safe form instead: a BigInt as its decimal digits (a string), a
 * reference back to an enclosing object as `"[Circular]"`. `repaired` tells whether that was
 * needed, for a warning.
 */
export function safeJsonLine(value: unknown): { line: string; repaired: boolean } {
  try {
    return { line: `${JSON.stringify(value)}\n`, repaired: false };
  } catch (error) {
    // A value nested past the stack's reach (a caller's own `append`; the loop refuses such
    // values, see `maxJsonDepth`) cannot be repaired: say so rather than throw a RangeError.
    if (error instanceof RangeError) throw new RangeError(`Not stored: the value cannot be written as JSON (${error.message}); values nested deeper than maxJsonDepth are refused by the loop.`);
    return { line: `${JSON.stringify(value, safeReplacer())}\n`, repaired: true };
  }
}

/** A replacer that turns BigInts into strings and references to an ancestor into "[Circular]". */
function safeReplacer(): (this: unknown, key: string, value: unknown) => unknown {
  // The objects from the root to the value being serialised: JSON.stringify calls the replacer
  // with `this` set to the holder, so the path is cut back to it before looking for a cycle.
  const ancestors: object[] = [];
  return function (this: unknown, _key: string, value: unknown): unknown {
    if (typeof value === "bigint") return value.toString();
    if (typeof value !== "object" || value === null) return value;
    while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
    if (ancestors.includes(value)) return "[Circular]";
    ancestors.push(value);
    return value;
  };
}
