import { errorText } from "./error-text.js";
import { HIGHEST_JSON_DEPTH } from "./json-depth.js";

/**
 * `value` as JSON for a client: as `safeJsonLine` stores it, a BigInt as its digits and a
 * reference back to an enclosing object as `"[Circular]"`, so that a tool's `details` holding a
 * BigInt (a database row's id, say) reach every client as they reach the transcript; what even
 * that cannot write as `writableCopy` writes it. Why: the session sent the event through
 * `JSON.stringify`, whose throw dropped the session's clients, and the snapshot they reconnected
 * to threw again: the session could not be watched any more. Throws only what no copy can help:
 * JSON longer than a string may be.
 */
export function repairedJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (isTooLong(error)) throw error;
    return safeJson(value);
  }
}

/**
 * `value` as JSON in the safe form, for a value `JSON.stringify` refused: a BigInt as its digits,
 * a reference to an ancestor as `"[Circular]"` (`safeReplacer`), and what even that cannot write
 * as `writableCopy` writes it. Throws only JSON longer than a string may be.
 */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, safeReplacer());
  } catch (error) {
    if (isTooLong(error)) throw error;
    return JSON.stringify(writableCopy(value));
  }
}

/** Whether `JSON.stringify` failed for the length of its text, which no repair shortens. */
function isTooLong(error: unknown): boolean {
  return error instanceof RangeError && !/call stack/i.test(error.message);
}

/**
 * A copy of `value` that `JSON.stringify` writes without a throw, for values the safe replacer
 * could not help: where a `toJSON`, a getter or a proxy throws, the copy holds
 * `"[unwritable: <why>]"`; past `HIGHEST_JSON_DEPTH` levels, `"[too deep]"`; a BigInt, its
 * digits; a reference to an ancestor, `"[Circular]"`. Recursion is bounded by that depth.
 */
export function writableCopy(value: unknown, key = "", ancestors: object[] = []): unknown {
  let written = value;
  try {
    if (written !== null && (typeof written === "object" || typeof written === "bigint")) {
      const toJSON = (written as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") written = toJSON.call(written, key) as unknown;
    }
    if (typeof written === "bigint") return written.toString();
    if (typeof written !== "object" || written === null) return written;
    if (written instanceof Number || written instanceof String || written instanceof Boolean) return written.valueOf();
    if (ancestors.includes(written)) return "[Circular]";
    if (ancestors.length >= HIGHEST_JSON_DEPTH) return "[too deep]";
    ancestors.push(written);
    try {
      return Array.isArray(written) ? copyItems(written, ancestors) : copyProperties(written, ancestors);
    } finally {
      ancestors.pop();
    }
  } catch (error) {
    return unwritable(error);
  }
}

function copyItems(items: readonly unknown[], ancestors: object[]): unknown[] {
  const copy: unknown[] = [];
  for (let index = 0; index < items.length; index++) copy.push(copiedEntry(items, String(index), ancestors));
  return copy;
}

function copyProperties(object: object, ancestors: object[]): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) copy[key] = copiedEntry(object, key, ancestors);
  return copy;
}

/** One entry, read under its own guard: one getter's throw spoils only its own entry. */
function copiedEntry(holder: object, key: string, ancestors: object[]): unknown {
  let entry: unknown;
  try {
    entry = (holder as Readonly<Record<string, unknown>>)[key];
  } catch (error) {
    return unwritable(error);
  }
  return writableCopy(entry, key, ancestors);
}

function unwritable(error: unknown): string {
  try {
    return `[unwritable: ${errorText(error)}]`;
  } catch {
    return "[unwritable]";
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
