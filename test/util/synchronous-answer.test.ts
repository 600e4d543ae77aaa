import { describe, expect, it } from "vitest";
import { synchronousAnswer } from "../../src/util/synchronous-answer.js";
import { watchedRejection } from "../helpers/watched-rejection.js";

describe("synchronousAnswer", () => {
  it("passes on what is not a thenable, an object with a `then` that is no function included", () => {
    const answer = { then: "later" };
    expect(synchronousAnswer(answer)).toBe(answer);
    expect(synchronousAnswer(undefined)).toBeUndefined();
    expect(synchronousAnswer(false)).toBe(false);
  });

  it("throws for a Promise, after giving it a rejection handler", () => {
    const { thenable, handled } = watchedRejection();
    expect(() => synchronousAnswer(thenable)).toThrow("it returned a Promise, and it must answer synchronously");
    expect(handled()).toBe(true);
  });

  it("throws the same for a thenable whose `then` throws", () => {
    const thenable = {
      then() {
        throw new Error("then fails");
      },
    };
    expect(() => synchronousAnswer(thenable)).toThrow("it returned a Promise, and it must answer synchronously");
  });
});
