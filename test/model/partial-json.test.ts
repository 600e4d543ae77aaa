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

/** The best of three timings of `work`, in ms: one slow run on a busy machine does not count. */
function fastestMs(work: () => void): number {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    work();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

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
    const flat = `[${"1,".repeat(23_999)}1`;
    const flatMs = fastestMs(() => parsePartialJson(flat));
    const adversarialMs = fastestMs(() => parsePartialJson(adversarial));
    // A generous bound: linear work is within a small factor of the flat text; the square was thousands of times more.
    expect(adversarialMs).toBeLessThan(20 * flatMs + 50);
  });

  it("parses 48 KB at a depth within the limit as fast as flat text", () => {
    const deep = "[".repeat(MAX_JSON_DEPTH - 1) + "1,".repeat(24_000);
    const flat = `[${"1,".repeat(24_063)}1`;
    const flatMs = fastestMs(() => parsePartialJson(flat));
    const deepMs = fastestMs(() => parsePartialJson(deep));
    expect((parsePartialJson(deep) as unknown[]).length).toBe(1);
    expect(deepMs).toBeLessThan(20 * flatMs + 50);
  });
});
