import { Type } from "@sinclair/typebox";
import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/tools/define-tool.js";
import { errorResult, isToolResult, textResult } from "../../src/tools/tool-results.js";

const parameters = Type.Object({});
const execute = () => textResult("ok");

describe("defineTool", () => {
  it("defaults the label to the name and keeps everything else", () => {
    const tool = defineTool({ name: "read_file", description: "Reads", parameters, execute, concurrency: 2, timeoutMs: 10 });
    expect(tool).toStrictEqual({ name: "read_file", label: "read_file", description: "Reads", parameters, execute, concurrency: 2, timeoutMs: 10 });
    expect(defineTool({ name: "x", label: "X tool", description: "", parameters, execute }).label).toBe("X tool");
  });

  it("rejects names providers refuse, a concurrency below 1 and a timeout that is not positive", () => {
    expect(() => defineTool({ name: "read file", description: "", parameters, execute })).toThrow(
      'Tool name "read file" is invalid: use 1 to 64 letters, digits, "_" or "-" (what providers accept).',
    );
    expect(() => defineTool({ name: "x".repeat(65), description: "", parameters, execute })).toThrow(TypeError);
    expect(() => defineTool({ name: "x", description: "", parameters, execute, concurrency: 0 })).toThrow('Tool "x": concurrency must be at least 1.');
    expect(() => defineTool({ name: "x", description: "", parameters, execute, timeoutMs: 0 })).toThrow('Tool "x": timeoutMs must be positive.');
  });

  it("tools defined alike share one hidden class, also once defineTool is optimized (no map of its own per tool)", () => {
    setFlagsFromString("--allow-natives-syntax");
    // V8's own check: two objects with one map. Compiled after the flag is set, so the syntax is allowed.
    const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
    const define = () => defineTool({ name: "work", description: "Works", parameters, execute: () => textResult("ok") });
    // Warm, object spread gave every tool a map of its own (about 220 bytes per tool; bench W5,
    // heap per idle agent, whose tools are defined per agent).
    for (let index = 0; index < 20_000; index++) define();
    expect(haveSameMap(define(), define())).toBe(true);
  });
});

describe("tool results", () => {
  it("builds text and error results", () => {
    expect(textResult("hi", { n: 1 })).toStrictEqual({ content: [{ type: "text", text: "hi" }], details: { n: 1 } });
    expect(errorResult("bad")).toStrictEqual({ content: [{ type: "text", text: "bad" }], details: {} });
  });

  it("recognizes the shape of a result", () => {
    expect(isToolResult(textResult("x"))).toBe(true);
    expect(isToolResult({ content: [{ type: "image", data: "AA", mimeType: "image/png" }] })).toBe(true);
    expect(isToolResult({ content: "x" })).toBe(false);
    expect(isToolResult({ content: [{ type: "text" }] })).toBe(false);
    expect(isToolResult("x")).toBe(false);
    expect(isToolResult(null)).toBe(false);
  });
});
