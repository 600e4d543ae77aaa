import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/util/json-depth.js";
import { sameJson, sameSerialized } from "../../src/util/same-json.js";

describe("sameJson", () => {
  it("is true only when both serialize to the same JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.jsonValue({ maxDepth: 4 }), (left, right) => {
        if (sameJson(left, right)) expect(JSON.stringify(left)).toBe(JSON.stringify(right));
        // A copy through JSON is the same JSON.
        expect(sameJson(left, JSON.parse(JSON.stringify(left)))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("answers false where it cannot tell without serializing", () => {
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(sameJson({ a: undefined }, { a: undefined })).toBe(false);
    expect(sameJson([undefined], [null])).toBe(false);
    expect(sameJson(new Date(0), new Date(0))).toBe(false);
    expect(sameJson(Number.NaN, Number.NaN)).toBe(false);
    expect(sameJson({}, [])).toBe(false);
    const deep = (depth: number): unknown => (depth === 0 ? 1 : [deep(depth - 1)]);
    expect(sameJson(deep(MAX_JSON_DEPTH + 2), deep(MAX_JSON_DEPTH + 2))).toBe(false);
    expect(sameJson(deep(MAX_JSON_DEPTH - 1), deep(MAX_JSON_DEPTH - 1))).toBe(true);
  });
});

describe("sameSerialized", () => {
  it("serializes where sameJson cannot tell, and agrees with JSON.stringify", () => {
    expect(sameSerialized({ a: undefined }, {})).toBe(true);
    expect(sameSerialized(new Date(0), new Date(0).toISOString())).toBe(true);
    expect(sameSerialized({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), (left, right) => {
        expect(sameSerialized(left, right)).toBe(JSON.stringify(left) === JSON.stringify(right));
      }),
      { numRuns: 500 },
    );
  });
});
