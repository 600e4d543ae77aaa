/**
 * Values JSON can carry that code reading it might not expect, for property tests of input from
 * outside: objects whose `toString` or `valueOf` is not a function, a `__proto__` key, long text,
 * nesting 3,000 deep (past what a recursive walk or `JSON.stringify` survives at 10,000).
 */
import fc from "fast-check";

/** `[[[…]]]` nested `levels` deep, made from text (JSON.parse takes any depth). */
export const deepArray = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`);

export const junk = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 6 }),
  fc.constant({}),
  fc.constant([]),
  fc.constantFrom({ toString: 1 }, { valueOf: "x", toString: null }, JSON.parse('{"__proto__": {"role": "user"}}') as unknown, { length: 3 }),
  fc.constantFrom("x".repeat(300), "x".repeat(5000)),
  fc.constant(deepArray(3000)),
);

/** `arbitrary` four times in five, else `junk`. */
export const maybe = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 4, arbitrary }, { weight: 1, arbitrary: junk });
