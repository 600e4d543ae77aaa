import { HIGHEST_JSON_DEPTH, nestsDeeperThan } from "./json-depth.js";

/**
 * `JSON.stringify(value)` for plain data of any depth: JSON.stringify itself for data within
 * `HIGHEST_JSON_DEPTH`, else a writer that keeps its own stack. Why: JSON.stringify recurses and
 * throws a `RangeError` somewhere past 2,000 levels, and a test double or a recorder must be
 * able to hand such data on so that the loop refuses it (issue 27). Same output as
 * JSON.stringify for plain data; `toJSON` methods and replacers are not supported.
 * @example jsonText([[[1]]]) === "[[[1]]]"
 */
export function jsonText(value: unknown): string {
  if (!nestsDeeperThan(value, HIGHEST_JSON_DEPTH)) return JSON.stringify(value) ?? "null";
  let text = "";
  // Each entry is an open array or object and how far it has been written.
  const stack: { container: Record<string, unknown> | unknown[]; keys: string[] | undefined; next: number; written: boolean }[] = [];
  let pending: unknown = value;
  for (;;) {
    if (pending !== undefined) {
      const current = pending;
      pending = undefined;
      if (typeof current === "object" && current !== null) {
        const isArray = Array.isArray(current);
        text += isArray ? "[" : "{";
        stack.push({ container: current as Record<string, unknown>, keys: isArray ? undefined : Object.keys(current), next: 0, written: false });
      } else text += JSON.stringify(current) ?? "null";
    }
    const top = stack[stack.length - 1];
    if (top === undefined) return text;
    const { container, keys } = top;
    if (keys === undefined) {
      const array = container as unknown[];
      if (top.next === array.length) {
        text += "]";
        stack.pop();
        continue;
      }
      if (top.next > 0) text += ",";
      const item = array[top.next++];
      // As JSON.stringify: what has no JSON form is null inside an array.
      pending = writable(item) ? item : null;
      continue;
    }
    // Skip the keys JSON.stringify leaves out (undefined, functions, symbols).
    while (top.next < keys.length && !writable((container as Record<string, unknown>)[keys[top.next]!])) top.next++;
    if (top.next === keys.length) {
      text += "}";
      stack.pop();
      continue;
    }
    const key = keys[top.next++]!;
    // Not `text` itself: reading a character of a concatenated string flattens it, every time.
    if (top.written) text += ",";
    top.written = true;
    text += `${JSON.stringify(key)}:`;
    pending = (container as Record<string, unknown>)[key];
  }
}

function writable(value: unknown): boolean {
  return value !== undefined && typeof value !== "function" && typeof value !== "symbol";
}
