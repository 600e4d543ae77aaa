import { describe, expect, it } from "vitest";
import { patternEngine } from "../../src/tools/pattern-engine.js";

describe("patternEngine", () => {
  it("tests with a linear-time automaton, named as RegExp names the pattern (Ajv keeps one engine per name)", () => {
    const lowercase = patternEngine("^[a-z]+$", "u");
    expect([lowercase.test("abc"), lowercase.test("A1")]).toStrictEqual([true, false]);
    expect(String(lowercase)).toBe("/^[a-z]+$/u");
    expect(String(patternEngine("^(a+)+$", "u"))).toBe("/^(a+)+$/u");
    expect(patternEngine("^(a+)+$", "u").test(`${"a".repeat(40)}!`)).toBe(false);
  });

  it("accepts anything for a pattern the automaton cannot run, and throws RegExp's error for one that is not a pattern", () => {
    const backReference = patternEngine("^(a)\\1$", "u");
    expect([backReference.test("ab"), String(backReference)]).toStrictEqual([true, "/^(a)\\1$/u"]);
    expect(patternEngine("a{5000}", "u").test("b")).toBe(true);
    expect(() => patternEngine("([a-z]", "u")).toThrow(SyntaxError);
  });
});
