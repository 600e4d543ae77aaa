import { type TSchema, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { describe, expect, it } from "vitest";
import { plainTypeBoxValidator } from "../../src/tools/typebox-plain-check.js";

// TypeBox's compiled check is the oracle: on a plain schema the quick check must accept exactly
// the JSON values the compiler accepts (answering `undefined` for the rest, which then go to the
// compiler), and hand back a copy.

const plainSchemas: Record<string, TSchema> = {
  "empty object": Type.Object({}),
  number: Type.Object({ n: Type.Number() }),
  "every primitive": Type.Object({ s: Type.String(), n: Type.Number(), i: Type.Integer(), b: Type.Boolean(), z: Type.Null() }),
  "optional and readonly": Type.Object({ s: Type.Optional(Type.String({ description: "a note" })), i: Type.Readonly(Type.Integer()) }, { title: "T" }),
  "closed, all required": Type.Object({ n: Type.Number(), s: Type.String() }, { additionalProperties: false }),
  "closed, one optional": Type.Object({ n: Type.Number(), s: Type.Optional(Type.String()) }, { additionalProperties: false }),
  nested: Type.Object({ point: Type.Object({ x: Type.Number(), y: Type.Number() }), tags: Type.Array(Type.String()) }),
  "array of objects": Type.Object({ items: Type.Array(Type.Object({ id: Type.Integer() })) }),
  "literal union (enum)": Type.Object({ unit: Type.Union([Type.Literal("c"), Type.Literal("f"), Type.Literal(1), Type.Literal(true)]) }),
  "optional union": Type.Object({ value: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Null()])) }),
};

const values: unknown[] = [
  {},
  { n: 1 },
  { n: 1.5, s: "x" },
  { n: "1" },
  { n: null },
  { n: 1, extra: true },
  { s: "a", n: 2, i: 3, b: false, z: null },
  { s: "a", n: 2, i: 3.5, b: false, z: null },
  { s: 1, i: 2 },
  { i: 2 },
  { point: { x: 1, y: 2 }, tags: ["a", "b"] },
  { point: { x: 1, y: "2" }, tags: [] },
  { point: { x: 1, y: 2 }, tags: ["a", 3] },
  { items: [{ id: 1 }, { id: 2 }] },
  { items: [{ id: 1 }, { id: 2.5 }] },
  { items: [{}] },
  { unit: "c" },
  { unit: "k" },
  { unit: 1 },
  { unit: true },
  { unit: false },
  { value: "x" },
  { value: 3 },
  { value: null },
  { value: [] },
  [],
  // A member named like an Object.prototype method: read through the prototype, as TypeBox reads it.
  JSON.parse('{"__proto__": {"n": 1}}'),
];

describe("plainTypeBoxValidator", () => {
  for (const [name, schema] of Object.entries(plainSchemas)) {
    it(`accepts exactly the values TypeBox's compiler accepts (${name}), and copies them`, () => {
      const validate = plainTypeBoxValidator(schema);
      expect(validate).toBeTypeOf("function");
      const compiled = TypeCompiler.Compile(schema);
      const answers = values.map((value) => validate!("tool", value as object));
      expect(answers.map((answer) => answer !== undefined)).toStrictEqual(values.map((value) => compiled.Check(value)));
      for (const [index, answer] of answers.entries()) {
        if (answer === undefined) continue;
        expect(answer).toStrictEqual({ valid: true, value: values[index] });
        if (answer.valid && typeof values[index] === "object") expect(answer.value).not.toBe(values[index]);
      }
    });
  }

  it("leaves to the compiler a value whose optional member is present but undefined (TypeBox's ExactOptionalPropertyTypes decides)", () => {
    expect(plainTypeBoxValidator(Type.Object({ s: Type.Optional(Type.String()) }))!("tool", { s: undefined })).toBeUndefined();
  });

  it("refuses a schema with anything that changes a check or the answer: constraints, defaults, formats, other kinds, examples", () => {
    const notPlain: TSchema[] = [
      Type.Object({ s: Type.String({ minLength: 1 }) }),
      Type.Object({ s: Type.String({ pattern: "^a" }) }),
      Type.Object({ s: Type.String({ format: "email" }) }),
      Type.Object({ n: Type.Number({ minimum: 0 }) }),
      Type.Object({ n: Type.Number({ default: 1 }) }),
      Type.Object({ default: Type.String() }),
      Type.Object({ n: Type.Number() }, { additionalProperties: Type.String() }),
      Type.Object({ n: Type.Number() }, { minProperties: 1 }),
      Type.Object({ a: Type.Array(Type.String(), { minItems: 1 }) }),
      Type.Object({ a: Type.Array(Type.String(), { uniqueItems: true }) }),
      Type.Object({ r: Type.Record(Type.String(), Type.Number()) }),
      Type.Object({ t: Type.Tuple([Type.Number()]) }),
      Type.Object({ x: Type.Any() }),
      Type.Object({ x: Type.Unknown() }),
      Type.Object({ x: Type.Intersect([Type.Object({ a: Type.Number() }), Type.Object({ b: Type.Number() })]) }),
      Type.Object({ x: Type.Union([]) }),
      Type.Object({ s: Type.String({ examples: [{ default: "x" }] }) }),
      Type.Object({ d: Type.Transform(Type.Number()).Decode((value) => value).Encode((value) => value) }),
      Type.Object({ n: Type.Number() }, { $id: "T" }),
      Type.Unsafe<{ n: number }>({ type: "object", properties: { n: { type: "number" } } }),
      // TypeBox's compiler reads a keyword whether it is enumerable or not.
      Object.defineProperty(Type.Object({ s: Type.String() }), "minProperties", { value: 1, enumerable: false }),
    ];
    expect(notPlain.map((schema) => plainTypeBoxValidator(schema))).toStrictEqual(notPlain.map(() => undefined));
  });
});
