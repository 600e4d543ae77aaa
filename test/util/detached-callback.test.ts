import { afterEach, describe, expect, it, vi } from "vitest";
import { callDetached, warnerOf, warnToConsole } from "../../src/util/detached-callback.js";

afterEach(() => vi.restoreAllMocks());

describe("callDetached", () => {
  it("calls the callback with its arguments, and reports nothing when it returns", () => {
    const calls: unknown[][] = [];
    const reports: string[] = [];
    callDetached("onSessionClose", (...args: [string, number]) => void calls.push(args), ["s1", 2], (message) => reports.push(message));
    callDetached("onSessionClose", undefined, ["s1", 2], (message) => reports.push(message));
    expect(calls).toStrictEqual([["s1", 2]]);
    expect(reports).toStrictEqual([]);
  });

  it("reports a throw instead of throwing it", () => {
    const reports: string[] = [];
    callDetached(
      "onChatClose",
      () => {
        throw new Error("the disk is full");
      },
      [],
      (message) => reports.push(message),
    );
    expect(reports).toStrictEqual(["onChatClose failed: the disk is full"]);
  });

  it("reports a rejection, so that it is never an unhandled one", async () => {
    const reports: string[] = [];
    callDetached("onChatClose", async () => Promise.reject(new Error("the disk is full")), [], (message) => reports.push(message));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(reports).toStrictEqual(["onChatClose failed: the disk is full"]);
  });

  it("reports a thenable whose `then` throws", () => {
    const reports: string[] = [];
    const thenable = {
      then() {
        throw new Error("then fails");
      },
    };
    callDetached("onToolsChanged", () => thenable, [], (message) => reports.push(message));
    expect(reports).toStrictEqual(["onToolsChanged failed: then fails"]);
  });
});

describe("warnerOf", () => {
  it("is the console without an onWarning, and onWarning with one", () => {
    const told: string[] = [];
    expect(warnerOf(undefined)).toBe(warnToConsole);
    warnerOf((message) => told.push(message))("the store failed");
    expect(told).toStrictEqual(["the store failed"]);
  });

  it("sends the warning and the failure to the console when onWarning throws or rejects", async () => {
    const consoleWarnings: unknown[] = [];
    vi.spyOn(console, "warn").mockImplementation((message: unknown) => void consoleWarnings.push(message));
    warnerOf(() => {
      throw new Error("the log is gone");
    })("first");
    warnerOf(() => Promise.reject(new Error("the log is gone")) as never)("second");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(consoleWarnings).toStrictEqual(["rxagent: first", "rxagent: onWarning failed: the log is gone", "rxagent: second", "rxagent: onWarning failed: the log is gone"]);
  });
});
