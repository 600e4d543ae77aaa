import { describe, expect, it } from "vitest";
import { withField } from "../../src/util/with-field.js";
import { FRESH_PROCESS_TIMEOUT_MS, sourceUrl } from "../helpers/fresh-process.js";
import { runWithHiddenClassProbe } from "../helpers/hidden-classes.js";

describe("withField", () => {
  it("copies as the spread does: the key last when new, in its place when the source has it; the source untouched", () => {
    const source = { type: "text_delta", delta: "a" };
    const added = withField(source, "partial", 1);
    expect(Object.keys(added)).toEqual(["type", "delta", "partial"]);
    expect(added).toEqual({ ...source, partial: 1 });
    const replaced = withField(source, "type", "text_end");
    expect(Object.keys(replaced)).toEqual(["type", "delta"]);
    expect(replaced).toEqual({ type: "text_end", delta: "a" });
    expect(source).toEqual({ type: "text_delta", delta: "a" });
  });

  it("keeps a peer's own __proto__ key a key, as the spread does, and the copy a plain object", () => {
    const source = JSON.parse('{"type":"text_delta","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const copy = withField(source, "partial", 1) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy["polluted"]).toBeUndefined();
    expect(Object.keys(copy)).toEqual(["type", "__proto__", "partial"]);
  });

  it(
    "gives its copies one hidden class once optimized",
    () => {
      const result = runWithHiddenClassProbe(
        `const { withField } = await import(${sourceUrl("util/with-field.ts")});
const copies: object[] = [];
const copySome = () => { for (let index = 0; index < 50; index++) copies.push(withField({ type: "text_delta", contentIndex: index, delta: "w" }, "partial", copies)); };
optimizeNow(withField, copySome);
console.log(sameHiddenClass(copies[copies.length - 1]!, copies[copies.length - 2]!));
`,
      );
      expect(result).toStrictEqual({ status: 0, stderr: "", stdout: "true\n" });
    },
    FRESH_PROCESS_TIMEOUT_MS,
  );
});
