import { describe, expect, it } from "vitest";
import { HIGHEST_JSON_DEPTH } from "../../src/util/json-depth.js";
import { repairedJson, writableCopy } from "../../src/util/repaired-json.js";

function throwingToJSON(): { toJSON(): never } {
  return {
    toJSON() {
      throw new Error("not today");
    },
  };
}

describe("repairedJson", () => {
  it("is JSON.stringify where that can write the value, and writes a BigInt and a cycle as the stores do", () => {
    expect(repairedJson({ a: [1, "b"] })).toBe('{"a":[1,"b"]}');
    const details: Record<string, unknown> = { count: 2n };
    details.self = details;
    expect(repairedJson({ details })).toBe('{"details":{"count":"2","self":"[Circular]"}}');
  });

  // It threw, and the session hub dropped every client of the session on each event and snapshot.
  it("writes what throws as a note of why, keeping the rest: a toJSON, a getter, a revoked proxy", () => {
    const getter = {
      kept: true,
      get broken(): never {
        throw new Error("no access");
      },
    };
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(JSON.parse(repairedJson({ a: throwingToJSON(), getter, proxy, list: [1, throwingToJSON()], count: 3n, date: new Date(0) }))).toStrictEqual({
      a: "[unwritable: not today]",
      getter: { kept: true, broken: "[unwritable: no access]" },
      proxy: expect.stringMatching(/^\[unwritable: .*revoked/),
      list: [1, "[unwritable: not today]"],
      count: "3",
      date: "1970-01-01T00:00:00.000Z",
    });
    expect(repairedJson(throwingToJSON())).toBe('"[unwritable: not today]"');
  });

  it("cuts what nests past the stack's reach, where JSON.stringify threw a RangeError", () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    let written: unknown = JSON.parse(repairedJson(deep));
    let levels = 0;
    while (Array.isArray(written)) {
      written = written[0];
      levels += 1;
    }
    expect([levels, written]).toStrictEqual([HIGHEST_JSON_DEPTH, "[too deep]"]);
  });
});

describe("writableCopy", () => {
  it("writes what JSON.stringify writes, for values it can write", () => {
    const value = { a: [1, null, "x", { b: true }], skipped: undefined, f: () => 1, boxed: new Number(4), nested: { toJSON: (key: string) => `key ${key}` } };
    expect(JSON.stringify(writableCopy(value))).toBe(JSON.stringify(value));
  });
});
