import { describe, expect, it } from "vitest";
import { parsePartialJson, parseToolArguments } from "../../src/model/partial-json.js";

describe("parsePartialJson", () => {
  it.each([
    ["", undefined],
    ["{", {}],
    ['{"', {}],
    ['{"ci', {}],
    ['{"city"', {}],
    ['{"city":', {}],
    ['{"city": "Par', { city: "Par" }],
    ['{"city": "Paris"', { city: "Paris" }],
    ['{"city": "Paris", "n', { city: "Paris" }],
    ['{"a": 12', { a: 12 }],
    ['{"a": 1.', {}],
    ['{"a": tr', {}],
    ['{"a": true', { a: true }],
    ['{"a": null, "b": [1, 2', { a: null, b: [1, 2] }],
    ['{"a": {"b": [1, {"c": "d', { a: { b: [1, { c: "d" }] } }],
    ['{"a": "x\\', { a: "x" }],
    ['{"a": "x\\u00', { a: "x" }],
    ['{"a": "line\\nbreak', { a: "line\nbreak" }],
    ['{"a": ["x", "y"], "b": {}}', { a: ["x", "y"], b: {} }],
    ["[1, 2, ", [1, 2]],
  ])("%j -> %j", (text, expected) => {
    expect(parsePartialJson(text)).toStrictEqual(expected);
  });

  it("parseToolArguments gives {} for anything that is not an object", () => {
    expect(parseToolArguments("")).toStrictEqual({});
    expect(parseToolArguments("[1, 2]")).toStrictEqual({});
    expect(parseToolArguments("not json")).toStrictEqual({});
    expect(parseToolArguments('{"x": 1}')).toStrictEqual({ x: 1 });
  });
});
