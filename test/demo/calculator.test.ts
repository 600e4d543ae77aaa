import { describe, expect, it } from "vitest";
import { CalculatorError, evaluate, format } from "../../src/demo/calculator.js";

describe("evaluate", () => {
  it.each([
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["2 * (3 + 4) ^ 2", 98],
    ["-2 ^ 2", -4],
    ["(-2) ^ 2", 4],
    ["2 ^ 3 ^ 2", 512],
    ["2 ^ -1", 0.5],
    ["--3", 3],
    ["10 % 4", 2],
    ["7 / 2", 3.5],
    ["sqrt(16) + abs(-3)", 7],
    ["max(1, 5, 3) - min(4, 2)", 3],
    ["pow(2, 8)", 256],
    ["round(pi * 100) / 100", 3.14],
    ["1.5e3 + .5", 1500.5],
    ["3 × 4 ÷ 2", 6],
    ["2 ** 5", 32],
  ])("%s = %d", (expression, value) => {
    expect(evaluate(expression).value).toBeCloseTo(value, 10);
  });

  it("records the steps innermost first, for progress", () => {
    expect(evaluate("2 * (3 + 4)")).toStrictEqual({ value: 14, steps: ["3 + 4 = 7", "2 * 7 = 14"] });
  });

  it.each([
    ["", /empty/],
    ["2 + * 3", /Unexpected "\*" at 5: expected a number/],
    ["(1 + 2", /expected "\)"/],
    ["1 + 2)", /Unexpected "\)" at 6/],
    ["1 / 0", /Division by zero/],
    ["5 % 0", /Division by zero/],
    ["sqrt(-1)", /not a real number/],
    ["process.exit(1)", /Unexpected character "\."/],
    ["__proto__", /Unknown name "__proto__"/],
    ["toString(1)", /Unknown name "toString"/],
    ["constructor", /Unknown name/],
    ["2; 3", /Unexpected character ";"/],
    ["alert`1`", /Unexpected character "`"/],
    ["10 ^ 400", /not a finite number/],
    ["pow(2)", /pow takes 2 argument/],
    ["1 +", /ends too early/],
    ["9".repeat(501), /too long/],
  ])("refuses %j with a clear error", (expression, message) => {
    expect(() => evaluate(expression)).toThrow(CalculatorError);
    expect(() => evaluate(expression)).toThrow(message);
  });

  it("formats numbers without float noise", () => {
    expect(format(0.1 + 0.2)).toBe("0.3");
    expect(format(84)).toBe("84");
    expect(format(-1 / 3)).toBe("-0.333333333333");
  });
});
