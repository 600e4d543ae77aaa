import { describe, expect, it } from "vitest";
import { repairedJson } from "../../src/util/repaired-json.js";

describe("repairedJson", () => {
  it("is JSON.stringify where that can write the value, and writes a BigInt and a cycle as the stores do", () => {
    expect(repairedJson({ a: [1, "b"] })).toBe('{"a":[1,"b"]}');
    const details: Record<string, unknown> = { count: 2n };
    details.self = details;
    expect(repairedJson({ details })).toBe('{"details":{"count":"2","self":"[Circular]"}}');
  });

  it("throws what no repair helps: a RangeError, a toJSON that throws", () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(() => repairedJson(deep)).toThrow(RangeError);
    expect(() =>
      repairedJson({
        toJSON() {
          throw new Error("not today");
        },
      }),
    ).toThrow("not today");
  });
});
