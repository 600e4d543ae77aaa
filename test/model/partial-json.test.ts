import { describe, expect, it } from "vitest";
import { parsePartialJson, parseToolArguments } from "../../src/model/partial-json.js";
import { MAX_JSON_DEPTH } from "../../src/util/json-depth.js";

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

describe("parsePartialJson on hostile text (issue 27)", () => {
  it("gives up on text nested deeper than the limit, open or closed", () => {
    expect(parsePartialJson("[".repeat(6000))).toBeUndefined();
    expect(parsePartialJson("[".repeat(6000) + "]".repeat(6000))).toBeUndefined();
    expect(parseToolArguments(`{"a": ${"[".repeat(6000)}`)).toStrictEqual({});
    expect(parsePartialJson(`{"a": ${"[".repeat(100)}1`)).toStrictEqual({ a: JSON.parse("[".repeat(100) + "1" + "]".repeat(100)) });
  });

  it("parses 48 KB of `[[[…` then `1,1,1…` in time proportional to its length, not length × depth", () => {
    // Before: the walk copied the stack of open arrays at every safe cut, 24,000 × 24,000 steps (12 s in a server).
    const adversarial = "[".repeat(24_000) + "1,".repeat(12_000);
    // No timing assertion (those belong to `npm run bench:partial-json`): the old walk took 67-97 s
    // here and failed by the test's timeout; the walk now stops at the depth limit, in milliseconds.
    expect(parsePartialJson(adversarial)).toBeUndefined();
  });

  it("parses 48 KB at a depth within the limit (its speed beside flat text is measured by npm run bench:partial-json)", () => {
    const deep = "[".repeat(MAX_JSON_DEPTH - 1) + "1,".repeat(24_000);
    let innermost = parsePartialJson(deep) as unknown[];
    for (let depth = 1; depth < MAX_JSON_DEPTH - 1; depth++) innermost = innermost[0] as unknown[];
    expect(innermost).toHaveLength(24_000);
  });
});
