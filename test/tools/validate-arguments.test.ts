import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { type ArgumentValidation, compileSchema, validateArguments as validateMaybeLater } from "../../src/tools/validate-arguments.js";
import { Observable } from "rxjs";

/** TypeBox schemas validate synchronously. */
function validateArguments(toolName: string, schema: Parameters<typeof validateMaybeLater>[1], raw: unknown): ArgumentValidation {
  const validation = validateMaybeLater(toolName, schema, raw);
  if (validation instanceof Observable) throw new Error("expected a synchronous validation");
  return validation;
}

const add = Type.Object({ a: Type.Number(), b: Type.Number() });

describe("validateArguments", () => {
  it("returns arguments that pass as the tool's own deep copy", () => {
    const raw = { a: 1, b: 2, nested: { list: [1, { x: 2 }] } };
    const validation = validateArguments("add", add, raw);
    expect(validation).toStrictEqual({ valid: true, value: raw });
    const value = (validation as { value: typeof raw }).value;
    expect(value).not.toBe(raw);
    expect(value.nested).not.toBe(raw.nested);
    expect(value.nested.list[1]).not.toBe(raw.nested.list[1]);
  });

  it('coerces "42" to 42 and "true" to true, and fills defaults, on a copy', () => {
    const schema = Type.Object({ count: Type.Number(), flag: Type.Boolean(), mode: Type.String({ default: "fast" }) });
    const raw = { count: "42", flag: "true" };
    expect(validateArguments("t", schema, raw)).toStrictEqual({ valid: true, value: { count: 42, flag: true, mode: "fast" } });
    expect(raw).toStrictEqual({ count: "42", flag: "true" });
  });

  it("fills defaults even when the raw arguments already pass", () => {
    const schema = Type.Object({ a: Type.Number(), mode: Type.Optional(Type.String({ default: "fast" })) });
    expect(validateArguments("t", schema, { a: 1 })).toStrictEqual({ valid: true, value: { a: 1, mode: "fast" } });
    expect(validateArguments("t", schema, { a: 1, mode: "slow" })).toStrictEqual({ valid: true, value: { a: 1, mode: "slow" } });
  });

  it("coerces nested values", () => {
    const schema = Type.Object({ items: Type.Array(Type.Object({ n: Type.Integer() })) });
    expect(validateArguments("t", schema, { items: [{ n: "4" }, { n: 5 }] })).toStrictEqual({ valid: true, value: { items: [{ n: 4 }, { n: 5 }] } });
  });

  it("never changes a number's value to make it pass: 4.5 or \"4.5\" is not an integer", () => {
    const schema = Type.Object({ line: Type.Integer() });
    expect(validateArguments("t", schema, { line: 4.5 })).toStrictEqual({
      valid: false,
      message: 'Invalid arguments for tool "t":\n  - /line: Expected integer (received 4.5)\nReceived arguments: {"line":4.5}',
    });
    expect(validateArguments("t", schema, { line: "4.5" })).toStrictEqual({
      valid: false,
      message: 'Invalid arguments for tool "t":\n  - /line: Expected integer (received "4.5")\nReceived arguments: {"line":"4.5"}',
    });
    expect(validateArguments("t", Type.Object({ n: Type.Number() }), { n: "0x10" })).toMatchObject({ valid: false });
    expect(validateArguments("t", schema, { line: "1e3" })).toMatchObject({ valid: false });
    expect(validateArguments("t", schema, { line: "12" })).toStrictEqual({ valid: true, value: { line: 12 } });
  });

  it("parses arguments that arrive as JSON text", () => {
    expect(validateArguments("add", add, '{"a":1,"b":"2"}')).toStrictEqual({ valid: true, value: { a: 1, b: 2 } });
  });

  it("rejects text that is not JSON, quoting what arrived", () => {
    const validation = validateArguments("add", add, "not json");
    expect(validation.valid).toBe(false);
    expect(!validation.valid && validation.message).toMatch(/^Invalid arguments for tool "add": not valid JSON \(.+\)\. Received: not json$/);
  });

  it("rejects arguments that are not an object", () => {
    const cases: [unknown, string][] = [
      [42, "a number (42)"],
      ["42", "a number (42)"],
      [null, "null"],
      [[1, 2], "an array"],
      ["[1]", "an array"],
      [true, "a boolean (true)"],
    ];
    for (const [raw, described] of cases) {
      expect(validateArguments("add", add, raw)).toStrictEqual({
        valid: false,
        message: `Invalid arguments for tool "add": expected a JSON object, received ${described}.`,
      });
    }
  });

  it("lists every failing path with what was expected and what arrived", () => {
    const schema = Type.Object({
      a: Type.Number(),
      b: Type.Number(),
      items: Type.Array(Type.Object({ n: Type.Integer() })),
      choice: Type.Union([Type.Literal("x"), Type.Literal("y")]),
    });
    expect(validateArguments("t", schema, { a: "x", items: [{ n: 1 }, {}], choice: "z" })).toStrictEqual({
      valid: false,
      message: [
        'Invalid arguments for tool "t":',
        "  - /b: Expected required property; Expected number (missing)",
        '  - /a: Expected number (received "x")',
        "  - /items/1/n: Expected required property; Expected integer (missing)",
        '  - /choice: Expected union value (received "z")',
        'Received arguments: {"a":"x","items":[{"n":1},{}],"choice":"z"}',
      ].join("\n"),
    });
  });

  it("rejects properties a schema with additionalProperties: false does not declare", () => {
    const schema = Type.Object({ a: Type.Number() }, { additionalProperties: false });
    expect(validateArguments("strict", schema, { a: 1, z: 2, y: "3" })).toStrictEqual({
      valid: false,
      message: 'Invalid arguments for tool "strict":\n  - /z: Unexpected property (received 2)\n  - /y: Unexpected property (received "3")\nReceived arguments: {"a":1,"z":2,"y":"3"}',
    });
  });

  it("truncates long received values", () => {
    const validation = validateArguments("add", add, "x".repeat(600));
    expect(!validation.valid && validation.message.endsWith(`${"x".repeat(500)}… (600 characters)`)).toBe(true);
  });

  it("compiles a schema once", () => {
    const schema = Type.Object({ a: Type.Number() });
    expect(compileSchema(schema)).toBe(compileSchema(schema));
  });
});
