import { PartialJsonParser } from "./partial-json-parser.js";

/**
 * Parses JSON that may be cut off anywhere, returning the best guess of the value so far.
 *
 * Streaming tool-call arguments arrive as fragments (`{"ci`, `ty": "Par`, ...); a UI wants to
 * show the fields that are already known. An unfinished string keeps the characters received,
 * an unfinished key or literal is dropped, open arrays and objects are closed. Text that nests
 * deeper than `MAX_JSON_DEPTH`, or stops being JSON, gives `undefined`. To parse text that grows,
 * keep one `PartialJsonParser` and append to it (each character is then read once).
 *
 * Contract: never throws; returns `undefined` when nothing usable has arrived yet.
 * @example parsePartialJson('{"city": "Par') // { city: "Par" }
 */
export function parsePartialJson(text: string): unknown {
  const parser = new PartialJsonParser();
  parser.append(text);
  return parser.value();
}

/**
 * The best-effort object form of streamed tool-call arguments: `{}` until an object is known.
 *
 * Contract: always returns a fresh plain object, never throws.
 */
export function parseToolArguments(text: string): Record<string, unknown> {
  return objectOrEmpty(parsePartialJson(text));
}

/**
 * Whether streamed arguments of `length` characters are due a new best guess, the last one having
 * been made at `guessedLength`: after every fragment up to 4 KiB, then each time the text has
 * doubled. Why not after every fragment: each guess copies the arrays and objects still open (a
 * guess handed out must never change), so an open array of n records copied per fragment would
 * cost time in the square of its length; doubling keeps all the copies together under twice the
 * final value's open containers (bench/README.md, `npm run bench:partial-json`).
 */
export function isGuessDue(length: number, guessedLength: number): boolean {
  return length <= GUESS_EVERY_FRAGMENT_UP_TO || length >= guessedLength * 2;
}

const GUESS_EVERY_FRAGMENT_UP_TO = 4096;

/** `value` when it is a plain object, else a fresh `{}`. */
export function objectOrEmpty(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
