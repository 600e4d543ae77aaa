import { describe, expect, it } from "vitest";
import { CallIdTable } from "../../src/model/call-id-table.js";

describe("CallIdTable", () => {
  it("knows every id added, through its growth, and no other", () => {
    const added = new Set<string>();
    const table = new CallIdTable((id) => added.has(id));
    for (let index = 0; index < 5_000; index++) {
      const id = `call_${index}`;
      expect(table.has(id)).toBe(false);
      table.add(id);
      added.add(id);
    }
    for (let index = 0; index < 5_000; index++) expect(table.has(`call_${index}`)).toBe(true);
    expect(table.has("call_5000")).toBe(false);
  });

  it("asks isTaken about an id whose hash it holds, and takes its answer: two ids may share a hash", () => {
    // These two share their 32-bit hash (found by search).
    const asked: string[] = [];
    const table = new CallIdTable((id) => {
      asked.push(id);
      return id === "call_75749";
    });
    table.add("call_75749");
    expect(table.has("call_522859")).toBe(false);
    expect(table.has("call_75749")).toBe(true);
    expect(table.has("call_1")).toBe(false);
    expect(asked).toStrictEqual(["call_522859", "call_75749"]);
  });

  // Each look for an id a server repeats every turn went through the transcript again.
  it("asks isTaken once about an id it holds, however often it is looked for", () => {
    let asked = 0;
    const table = new CallIdTable(() => {
      asked += 1;
      return true;
    });
    table.add("call_0");
    for (let turn = 0; turn < 100; turn++) expect(table.has("call_0")).toBe(true);
    expect(asked).toBe(1);
  });

  it("names a repeated id <id>_<n> with the next n, skipping names taken", () => {
    const added = new Set<string>();
    const table = new CallIdTable((id) => added.has(id));
    for (const id of ["a", "a_2"]) {
      table.add(id);
      added.add(id);
    }
    expect(table.renamed("a", new Set(["a_3"]))).toBe("a_4");
    expect(table.renamed("a", new Set())).toBe("a_5");
    expect(table.renamed("b", new Set())).toBe("b_2");
  });
});
