import { describe, expect, it } from "vitest";
import { timeline } from "./timeline.js";

describe("timeline", () => {
  it("builds groups at absolute frames, the gaps between them, and the completion with the last frame", () => {
    expect(timeline({ 0: ["a0", "b0"], 10: ["c10"], 20: ["d20", "e20"] })).toStrictEqual([
      "(ab) 6ms c 9ms (de|)",
      { a: "a0", b: "b0", c: "c10", d: "d20", e: "e20" },
    ]);
  });

  it("leaves the Observable open when asked, and completes alone when the last frame has no value", () => {
    expect(timeline({ 5: ["x"] }, "open")).toStrictEqual(["5ms a", { a: "x" }]);
    expect(timeline({ 0: ["x"], 3: [] })).toStrictEqual(["a 2ms |", { a: "x" }]);
  });

  it("refuses a frame inside the group before it", () => {
    expect(() => timeline({ 0: ["a", "b"], 2: ["c"] })).toThrow("frame 2 comes before the group at the frame before it has ended (frame 4)");
  });
});
