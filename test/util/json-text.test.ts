import { describe, expect, it } from "vitest";
import { jsonText } from "../../src/util/json-text.js";

function nested(levels: number, inner: unknown): unknown {
  let value = inner;
  for (let level = 0; level < levels; level++) value = level % 2 === 0 ? [value, 1] : { a: value, b: "x" };
  return value;
}

describe("jsonText", () => {
  it.each([
    ["a number", 1],
    ["null", null],
    ["a string with quotes", 'say "hi"\n'],
    ["mixed plain data", { a: [1, "two", null, true, { b: [] }], c: {}, d: undefined, e: () => 1, f: Number.NaN }],
    ["an array with holes of no JSON form", [undefined, () => 1, Symbol("s"), 2]],
  ])("writes %s as JSON.stringify does", (_name, value) => {
    expect(jsonText(value)).toBe(JSON.stringify(value));
  });

  it("writes data nested 6,000 deep, which JSON.stringify cannot, and JSON.parse reads it back", () => {
    const deep = nested(6000, { leaf: [undefined, 3], skipped: undefined });
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const text = jsonText(deep);
    // JSON.parse is iterative in V8: it reads any depth.
    const parsed = JSON.parse(text) as unknown;
    // The same text the shallow path gives for the same shape, checked on its innermost part.
    expect(text.startsWith('{"a":[{"a":[')).toBe(true);
    expect(text).toContain('{"leaf":[null,3]}');
    expect(jsonText(parsed)).toBe(text);
  });
});
