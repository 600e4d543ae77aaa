import { describe, expect, it } from "vitest";
import { copyArguments } from "../../src/tools/copy-arguments.js";

describe("copyArguments", () => {
  it("copies every plain object and array of a JSON tree", () => {
    const original = { a: 1, nested: { list: [1, { x: "y" }], none: null }, flag: false };
    const copy = copyArguments(original);
    expect(copy).toStrictEqual(original);
    expect(copy.nested).not.toBe(original.nested);
    expect(copy.nested.list).not.toBe(original.nested.list);
    expect(copy.nested.list[1]).not.toBe(original.nested.list[1]);
  });

  it('keeps a "__proto__" key JSON.parse made as a plain key, never as the prototype', () => {
    const original = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = copyArguments(original);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toStrictEqual(["__proto__", "a"]);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("shares values that are not plain JSON objects", () => {
    const when = new Date(0);
    expect(copyArguments({ when }).when).toBe(when);
  });
});
