/**
 * `value` as JSON for a client: as `safeJsonLine` stores it, a BigInt as its digits and a
 * reference back to an enclosing object as `"[Circular]"`, so that a tool's `details` holding a
 * BigInt (a database row's id, say) reach every client as they reach the transcript. Why: the
 * session sent the event through `JSON.stringify`, whose throw dropped the session's clients, and
 * the snapshot they reconnected to threw again: the session could not be watched any more.
 */
export function repairedJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) throw error;
    return JSON.stringify(value, safeReplacer());
  }
}

/** A replacer that turns BigInts into strings and references to an ancestor into "[Circular]". */
export function safeReplacer(): (this: unknown, key: string, value: unknown) => unknown {
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
