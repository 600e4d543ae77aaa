/**
 * The parts of JSON's grammar and of `JSON.parse`'s results that `PartialJsonParser` reads and
 * builds by hand: character codes, escapes, literals, and own properties as `JSON.parse` sets them.
 */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Sets an own property as JSON.parse does: `__proto__` becomes a plain key, not the prototype. */
export function setProperty(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

/** What `literalValue` gives for text that is not a whole literal. */
export const NOT_A_LITERAL = Symbol("not a literal");

/** The value of a whole literal (`true`, `-1.5e3`), or `NOT_A_LITERAL` (`tr`, `1.`, `01`). */
export function literalValue(text: string): unknown {
  switch (text) {
    case "true":
      return true;
    case "false":
      return false;
    case "null":
      return null;
  }
  // Number() of text in JSON's number grammar is what JSON.parse gives (-0 included).
  return JSON_NUMBER.test(text) ? Number(text) : NOT_A_LITERAL;
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const SPACE = 0x20;
export const NEWLINE = 0x0a;
export const CARRIAGE_RETURN = 0x0d;
export const TAB = 0x09;
export const LETTER_U = 0x75;

/** What each one-character escape stands for, by the code of the character after the backslash. */
export const ESCAPES: Record<number, string | undefined> = { 0x22: '"', 0x5c: "\\", 0x2f: "/", 0x62: "\b", 0x66: "\f", 0x6e: "\n", 0x72: "\r", 0x74: "\t" };

/** 0–15 for a hex digit, else -1. */
export function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x61 + 10;
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10;
  return -1;
}

/** `[0-9a-zA-Z.+-]`: what numbers and literals are made of (false for NaN, past the end). */
export function isLiteralChar(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    code === 0x2e ||
    code === 0x2b ||
    code === 0x2d
  );
}
