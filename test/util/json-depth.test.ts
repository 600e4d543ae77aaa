import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, nestsDeeperThan, textNestsDeeperThan } from "../../src/util/json-depth.js";

/** `[[[…]]]` with `levels` arrays, built from text: JSON.parse takes any depth. */
function nested(levels: number): unknown {
  return JSON.parse("[".repeat(levels) + "]".repeat(levels));
}

describe("nestsDeeperThan", () => {
  it.each([
    [1, 0, false],
    ["text", 0, false],
    [null, 0, false],
    [{}, 0, true],
    [{}, 1, false],
    [{ a: [1, { b: 2 }] }, 3, false],
    [{ a: [1, { b: 2 }] }, 2, true],
    [[[], [[]]], 3, false],
    [[[], [[]]], 2, true],
  ])("%j deeper than %i: %s", (value, limit, expected) => {
    expect(nestsDeeperThan(value, limit)).toBe(expected);
  });

  it("answers for 100,000 levels without overflowing the stack (where JSON.stringify does)", () => {
    const deep = nested(100_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(nestsDeeperThan(deep)).toBe(true);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });
});

describe("textNestsDeeperThan", () => {
  it("counts brackets outside strings only", () => {
    expect(textNestsDeeperThan('{"a": "[[[[[[[[[[", "b": [[1]]}', 3)).toBe(false);
    expect(textNestsDeeperThan('{"a": "\\"[[[[", "b": [[[1]]]}', 3)).toBe(true);
    expect(textNestsDeeperThan("[".repeat(MAX_JSON_DEPTH))).toBe(false);
    expect(textNestsDeeperThan("[".repeat(MAX_JSON_DEPTH + 1))).toBe(true);
  });
});
