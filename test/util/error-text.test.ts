import { describe, expect, it } from "vitest";
import { errorText, UNREADABLE_ERROR_TEXT } from "../../src/util/error-text.js";
import { hostileProxy, revokedProxy } from "../helpers/unreadable-values.js";

describe("errorText", () => {
  it("reads an Error's message, a string, and anything else as JSON or as text", () => {
    expect([errorText(new Error("disk full")), errorText("plain"), errorText({ code: 7 }), errorText(10n), errorText(Symbol("s")), errorText(undefined)]).toStrictEqual([
      "disk full",
      "plain",
      '{"code":7}',
      "10",
      "Symbol(s)",
      "undefined",
    ]);
  });

  it("writes an Error's message that is not a string as JSON", () => {
    const error = new Error("x");
    (error as { message: unknown }).message = { reason: "quota" };
    expect(errorText(error)).toBe('{"reason":"quota"}');
  });

  // Each of these threw out of errorText, inside the handler that turns a tool's failure into its
  // error result: a rejection handler that threw (an unhandled rejection, which ends a Node
  // process) and a run that never ended.
  it("never throws: a Proxy whose traps throw, a revoked Proxy, a throwing message getter, a throwing toString and toJSON", () => {
    const badMessage = new Error("x");
    Object.defineProperty(badMessage, "message", {
      get() {
        throw new Error("message unreadable");
      },
    });
    const badText = {
      toString(): string {
        throw new Error("no text");
      },
      toJSON(): string {
        throw new Error("no JSON");
      },
    };
    expect([hostileProxy(), revokedProxy(), badMessage, badText].map(errorText)).toStrictEqual(Array(4).fill(UNREADABLE_ERROR_TEXT));
  });
});
