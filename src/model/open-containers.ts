import { setProperty } from "./json-grammar.js";

/**
 * One array or object still open while `PartialJsonParser` reads: the values closed in it so far,
 * and for an object the key being read. Why it holds only closed values: a closed value never
 * changes again, so partials may share it; the open ones are copied when a partial is taken.
 */
export interface OpenContainer {
  readonly array: unknown[] | undefined;
  readonly object: Record<string, unknown> | undefined;
  /** The key whose value comes next (objects only; stale once that value is in `object`). */
  key: string;
}

export function newContainer(isArray: boolean): OpenContainer {
  return isArray ? { array: [], object: undefined, key: "" } : { array: undefined, object: {}, key: "" };
}

/** Adds a value that has ended to its container: the next element, or the value of the key read. */
export function addClosedValue(container: OpenContainer, value: unknown): void {
  if (container.array !== undefined) container.array.push(value);
  else setProperty(container.object as Record<string, unknown>, container.key, value);
}

/**
 * The open containers (outermost first) as a value that never changes: each copied, the inner
 * one's copy (or `innermost`, the unfinished string or number, when `hasInnermost`) added as its
 * last element or as its key's value. Closed values inside are shared, not copied, so the cost is
 * the open containers' sizes, not the text's. An explicit loop: no depth reaches the JS stack.
 */
export function snapshotOpen(open: readonly OpenContainer[], innermost: unknown, hasInnermost: boolean): unknown {
  let inner = innermost;
  let hasInner = hasInnermost;
  for (let depth = open.length - 1; depth >= 0; depth--) {
    const container = open[depth] as OpenContainer;
    if (container.array !== undefined) {
      const copy = container.array.slice();
      if (hasInner) copy.push(inner);
      inner = copy;
    } else {
      // Spread defines own properties, so a `__proto__` key stays a plain key.
      const copy = { ...container.object };
      if (hasInner) setProperty(copy, container.key, inner);
      inner = copy;
    }
    hasInner = true;
  }
  return inner;
}
