import { MAX_JSON_DEPTH } from "./json-depth.js";

/**
 * Whether two values serialize to the same JSON, decided without serializing them. Why: the
 * delta encoder checks streamed tool arguments (a megabyte or more) against the ones it derives
 * itself, and `JSON.stringify` of both sides made two strings of that size each time, garbage
 * that was most of the server's peak heap (bench/README.md, `npm run bench:stream-e2e`).
 *
 * Contract: true only when `JSON.stringify(left) === JSON.stringify(right)`. False also stands
 * for "not plain JSON data" (a class instance, a `toJSON`, an `undefined` member, nesting past
 * `MAX_JSON_DEPTH`): the caller then serializes, as it would have.
 */
export function sameJson(left: unknown, right: unknown, depth = 0): boolean {
  if (left === right) return true;
  if (typeof left !== "object" || typeof right !== "object" || left === null || right === null || depth >= MAX_JSON_DEPTH) return false;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) {
      const item = left[index] as unknown;
      if (item === undefined || !sameJson(item, right[index], depth + 1)) return false;
    }
    return true;
  }
  if (Array.isArray(right) || !isPlainRecord(left) || !isPlainRecord(right)) return false;
  // One side's keys by `for…in` (plain records: their prototype adds none), not a second array:
  // the delta encoder compares the message's usage on every event.
  const otherKeys = Object.keys(right);
  let index = 0;
  for (const key in left) {
    // Key order is part of the JSON text.
    if (key !== otherKeys[index++]) return false;
    const value = left[key];
    if (value === undefined || !sameJson(value, right[key], depth + 1)) return false;
  }
  return index === otherKeys.length;
}

/** Whether two values serialize to the same JSON: `sameJson` for plain data, else (a `toJSON`, an `undefined` member) by serializing both. */
export function sameSerialized(left: unknown, right: unknown): boolean {
  return sameJson(left, right) || JSON.stringify(left) === JSON.stringify(right);
}

function isPlainRecord(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
