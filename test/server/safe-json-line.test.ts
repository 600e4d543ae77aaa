import { describe, expect, it } from "vitest";
import { safeJsonLine } from "../../src/server/safe-json-line.js";

function nested(levels: number): unknown[] {
  let value: unknown[] = [];
  for (let level = 1; level < levels; level++) value = [value];
  return value;
}

describe("safeJsonLine", () => {
  it("writes a BigInt and a cycle in a safe form", () => {
    const details: Record<string, unknown> = { count: 2n };
    details.self = details;
    expect(safeJsonLine({ details })).toStrictEqual({ line: '{"details":{"count":"2","self":"[Circular]"}}\n', repaired: true });
  });

  // A caller's own store.append with a value nested 6,000 deep: before, the replacer's second
  // JSON.stringify overflowed too and a bare "Maximum call stack size exceeded" came out.
  it("refuses a value nested 6,000 deep with an error that says why", () => {
    expect(() => safeJsonLine({ role: "note", content: nested(6000), timestamp: 0 })).toThrow(/^Not stored: the value cannot be written as JSON \(Maximum call stack size exceeded\); values nested deeper than maxJsonDepth are refused by the loop\.$/);
  });
});
