import { describe, expect, it } from "vitest";
import { mayBacktrackExponentially, patternEngine } from "../../src/tools/pattern-engine.js";

describe("mayBacktrackExponentially", () => {
  it("finds a repeated group that repeats or branches inside", () => {
    for (const pattern of ["^(a+)+$", "^(\\w+\\s?)*$", "(a|ab)*c", "^([a-z]+\\.)*[a-z]+$", "((a+))+", "(a*){2,}", "(?:x\\d{2,})+"]) expect([pattern, mayBacktrackExponentially(pattern)]).toStrictEqual([pattern, true]);
  });

  it("passes groups that are not repeated, or repeat a fixed body, and reads escapes and classes as atoms", () => {
    for (const pattern of ["^(https?|ftp)://", "^[a-z]+$", "(ab)+", "(\\d{1})+", "^(\\+)+$", "^([+*|(])+$", "^\\d{3}-\\d{4}$", "(a+)"]) expect([pattern, mayBacktrackExponentially(pattern)]).toStrictEqual([pattern, false]);
  });
});

describe("patternEngine", () => {
  it("is JavaScript's RegExp for a safe pattern, and accepts anything for one that may backtrack exponentially", () => {
    expect(patternEngine("^[a-z]+$", "u").test("A1")).toBe(false);
    expect(patternEngine("^(a+)+$", "u").test(`${"a".repeat(40)}!`)).toBe(true);
  });
});
