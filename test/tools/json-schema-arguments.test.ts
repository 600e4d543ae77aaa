import { Type } from "@sinclair/typebox";
import { Type as Type1 } from "typebox";
import { Observable } from "rxjs";
import { describe, expect, it } from "vitest";
import { type ArgumentValidation, compileSchema, validateArguments as validateMaybeLater } from "../../src/tools/validate-arguments.js";
// Ajv loaded up front, as `rxagent/json-schema` does: these tests check its answers, given at once.
import "../../src/json-schema/index.js";

function validateArguments(toolName: string, schema: object, raw: unknown): ArgumentValidation {
  const validation = validateMaybeLater(toolName, schema, raw);
  if (validation instanceof Observable) throw new Error("expected a synchronous validation");
  return validation;
}

/** The same schema three ways: TypeBox 0.34 (its own compiler), TypeBox 1.x and plain JSON (both through Ajv). */
const schemas = {
  typebox034: Type.Object({
    count: Type.Optional(Type.Number()),
    line: Type.Optional(Type.Integer()),
    flag: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String()),
    mode: Type.Optional(Type.String({ default: "fast" })),
    items: Type.Optional(Type.Array(Type.Object({ n: Type.Integer() }))),
  }),
  typebox1: Type1.Object({
    count: Type1.Optional(Type1.Number()),
    line: Type1.Optional(Type1.Integer()),
    flag: Type1.Optional(Type1.Boolean()),
    name: Type1.Optional(Type1.String()),
    mode: Type1.Optional(Type1.String({ default: "fast" })),
    items: Type1.Optional(Type1.Array(Type1.Object({ n: Type1.Integer() }))),
  }),
  plainJson: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      count: { type: "number" },
      line: { type: "integer" },
      flag: { type: "boolean" },
      name: { type: "string" },
      mode: { type: "string", default: "fast" },
      items: { type: "array", items: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
    },
  },
};

/** Each row: raw arguments, then the value the tool gets (undefined: the call is refused). */
const sameOnEveryPath: [unknown, unknown][] = [
  [{}, { mode: "fast" }],
  [{ count: 1.5, mode: "slow" }, { count: 1.5, mode: "slow" }],
  [{ count: "42" }, { count: 42, mode: "fast" }],
  [{ count: "4.5" }, { count: 4.5, mode: "fast" }],
  [{ line: "12" }, { line: 12, mode: "fast" }],
  [{ line: 4.5 }, undefined],
  [{ line: "4.5" }, undefined],
  [{ flag: "true" }, { flag: true, mode: "fast" }],
  [{ flag: "false" }, { flag: false, mode: "fast" }],
  [{ flag: 1 }, { flag: true, mode: "fast" }],
  [{ name: 5 }, { name: "5", mode: "fast" }],
  [{ name: true }, { name: "true", mode: "fast" }],
  [{ count: "abc" }, undefined],
  [{ count: "" }, undefined],
  [{ items: [{ n: "4" }, { n: 5 }] }, { items: [{ n: 4 }, { n: 5 }], mode: "fast" }],
  [{ items: [{ n: 1 }, {}] }, undefined],
  ['{"count":"7"}', { count: 7, mode: "fast" }],
  [{ extra: { deep: [1] } }, { extra: { deep: [1] }, mode: "fast" }],
];

describe("JSON Schema arguments (TypeBox 1.x, plain JSON Schema) through Ajv", () => {
  it("coerce and fill defaults exactly as the TypeBox 0.34 path does", () => {
    for (const [raw, expected] of sameOnEveryPath) {
      const outcomes = Object.entries(schemas).map(([kind, schema]) => {
        const validation = validateArguments("t", schema, structuredClone(raw));
        return [kind, validation.valid ? validation.value : undefined];
      });
      expect({ raw, outcomes: Object.fromEntries(outcomes) }).toStrictEqual({
        raw,
        outcomes: { typebox034: expected, typebox1: expected, plainJson: expected },
      });
    }
  });

  it("never changes the caller's arguments while coercing", () => {
    const raw = { count: "42", items: [{ n: "4" }] };
    const validation = validateArguments("t", schemas.plainJson, raw);
    expect(validation).toStrictEqual({ valid: true, value: { count: 42, items: [{ n: 4 }], mode: "fast" } });
    expect(raw).toStrictEqual({ count: "42", items: [{ n: "4" }] });
  });

  it("names every failing path, what was expected and what arrived", () => {
    const schema = Type1.Object({ a: Type1.Number(), b: Type1.Number(), items: Type1.Array(Type1.Object({ n: Type1.Integer() })) });
    expect(validateArguments("t", schema, { a: "x", items: [{ n: 1 }, {}] })).toStrictEqual({
      valid: false,
      message: [
        'Invalid arguments for tool "t":',
        "  - /b: must have required property 'b' (missing)",
        '  - /a: must be number (received "x")',
        "  - /items/1/n: must have required property 'n' (missing)",
        'Received arguments: {"a":"x","items":[{"n":1},{}]}',
      ].join("\n"),
    });
  });

  it("rejects properties a schema with additionalProperties: false does not declare", () => {
    const schema = { type: "object", properties: { a: { type: "number" } }, additionalProperties: false };
    expect(validateArguments("strict", schema, { a: 1, z: 2 })).toStrictEqual({
      valid: false,
      message: 'Invalid arguments for tool "strict":\n  - /z: must NOT have additional properties (received 2)\nReceived arguments: {"a":1,"z":2}',
    });
  });

  it("takes draft-07 schemas as MCP servers built on zod-to-json-schema send them, tuple items included", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { point: { type: "array", items: [{ type: "number" }, { type: "number" }], additionalItems: false } },
      required: ["point"],
      additionalProperties: false,
    };
    expect(validateArguments("t", schema, { point: ["1", 2] })).toStrictEqual({ valid: true, value: { point: [1, 2] } });
    expect(validateArguments("t", schema, { point: [1, 2, 3] })).toMatchObject({ valid: false });
  });

  it("takes draft 2020-12 keywords (prefixItems, $defs) and an undeclared draft-07 tuple", () => {
    const schema = {
      type: "object",
      $defs: { coordinate: { type: "number" } },
      properties: { point: { type: "array", prefixItems: [{ $ref: "#/$defs/coordinate" }, { $ref: "#/$defs/coordinate" }], items: false } },
    };
    expect(validateArguments("t", schema, { point: [1, "2"] })).toStrictEqual({ valid: true, value: { point: [1, 2] } });
    expect(validateArguments("t", schema, { point: [1, 2, 3] })).toMatchObject({ valid: false });
    const undeclaredTuple = { type: "object", properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }] } } };
    expect(validateArguments("t", undeclaredTuple, { pair: ["a", "1"] })).toStrictEqual({ valid: true, value: { pair: ["a", 1] } });
  });

  it("treats formats as annotations and allows unknown keywords", () => {
    const schema = { type: "object", properties: { url: { type: "string", format: "uri", "x-vendor": true } } };
    expect(validateArguments("t", schema, { url: "not a uri" })).toStrictEqual({ valid: true, value: { url: "not a uri" } });
  });

  // An MCP server's `^(a+)+$` held the process 3.9 s on a 26-character argument, and doubled with
  // every character more: this 40-character one would have taken hours. `^\d*\d*\d*$` held it
  // 27 s on 4,000 digits and a letter (cubic): this 20,000-character one, hours.
  it("checks patterns in time linear in the argument, however JavaScript's RegExp would backtrack on them", () => {
    const schema = {
      type: "object",
      properties: { name: { type: "string", pattern: "^(a+)+$" }, digits: { type: "string", pattern: "^\\d*\\d*\\d*$" }, code: { type: "string", pattern: "^[a-z]+$" } },
    };
    expect(validateArguments("t", schema, { name: `${"a".repeat(40)}!` })).toMatchObject({ valid: false, message: expect.stringContaining('"^(a+)+$"') });
    expect(validateArguments("t", schema, { name: "a".repeat(40) })).toMatchObject({ valid: true });
    expect(validateArguments("t", schema, { digits: `${"1".repeat(20_000)}x` })).toMatchObject({ valid: false });
    expect(validateArguments("t", schema, { digits: "1".repeat(20_000) })).toMatchObject({ valid: true });
    expect(validateArguments("t", schema, { code: "A1" })).toMatchObject({ valid: false });
  });

  it("does not check a pattern no linear-time automaton can run, and still refuses one that is not a pattern", () => {
    const schema = { type: "object", properties: { twice: { type: "string", pattern: "^(a+)\\1$" }, ahead: { type: "string", pattern: "^(?=.*\\d)" } } };
    expect(validateArguments("t", schema, { twice: "ab", ahead: "none" })).toStrictEqual({ valid: true, value: { twice: "ab", ahead: "none" } });
    expect(validateArguments("broken", { type: "object", properties: { a: { type: "string", pattern: "([a-z]" } } }, { a: "x" })).toMatchObject({
      valid: false,
      message: expect.stringMatching(/^Tool "broken" has parameters that cannot be used as a schema: .*Invalid regular expression/),
    });
  });

  it("lets two servers use schemas with the same $id", () => {
    const first = { $id: "https://example.com/same.json", type: "object", properties: { a: { type: "number" } } };
    const second = { $id: "https://example.com/same.json", type: "object", properties: { a: { type: "string" } } };
    expect(validateArguments("one", first, { a: 1 })).toStrictEqual({ valid: true, value: { a: 1 } });
    expect(validateArguments("two", second, { a: "x" })).toStrictEqual({ valid: true, value: { a: "x" } });
  });

  it("compiles each schema object once", () => {
    const schema = Type1.Object({ a: Type1.Number() });
    expect(compileSchema(schema)).toBe(compileSchema(schema));
  });

  it("turns a schema that cannot compile into an error naming the tool, on every call", () => {
    expect(validateArguments("broken", { type: "nope" }, { a: 1 })).toStrictEqual({
      valid: false,
      message: expect.stringMatching(/^Tool "broken" has parameters that cannot be used as a schema: schema is invalid: data\/type must be/),
    });
    expect(validateArguments("broken", { $schema: "http://json-schema.org/draft-04/schema#", type: "object" }, {})).toStrictEqual({
      valid: false,
      message: expect.stringMatching(/^Tool "broken" has parameters that cannot be used as a schema: no schema with key or ref/),
    });
  });
});
