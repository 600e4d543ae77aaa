import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { lastValueFrom, Observable } from "rxjs";
import * as v from "valibot";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { Type } from "@sinclair/typebox";
import { Type as Type1 } from "typebox";
import { defineTool } from "../../src/tools/define-tool.js";
import { compileSchema, validateArguments } from "../../src/tools/validate-arguments.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { StandardSchemaV1 } from "../../src/tools/standard-schema.js";
// Ajv loaded up front, as `rxagent/json-schema` does: these tests check its answers, given at once.
import "../../src/json-schema/index.js";

describe("Standard Schema arguments (zod 4, valibot)", () => {
  it("validates through ~standard.validate with the library's own rules and defaults", () => {
    const schema = z.object({ city: z.string(), days: z.number().int().default(3), units: z.coerce.number().optional() });
    expect(validateArguments("weather", schema, { city: "Paris", units: "2" })).toStrictEqual({
      valid: true,
      value: { city: "Paris", days: 3, units: 2 },
    });
    expect(validateArguments("weather", schema, { days: 1.5 })).toStrictEqual({
      valid: false,
      message: [
        'Invalid arguments for tool "weather":',
        "  - /city: Invalid input: expected string, received undefined (missing)",
        "  - /days: Invalid input: expected int, received number (received 1.5)",
        'Received arguments: {"days":1.5}',
      ].join("\n"),
    });
  });

  it("validates valibot schemas, nested paths included", () => {
    const schema = toStandardJsonSchema(v.object({ items: v.array(v.object({ n: v.number() })) }));
    expect(validateArguments("t", schema, { items: [{ n: 1 }] })).toStrictEqual({ valid: true, value: { items: [{ n: 1 }] } });
    expect(validateArguments("t", schema, { items: [{ n: 1 }, { n: "2" }] })).toStrictEqual({
      valid: false,
      message: [
        'Invalid arguments for tool "t":',
        '  - /items/1/n: Invalid type: Expected number but received "2" (received "2")',
        'Received arguments: {"items":[{"n":1},{"n":"2"}]}',
      ].join("\n"),
    });
  });

  it("hands the tool a copy: a schema that passes values through never shares the caller's objects", () => {
    const raw = { payload: { list: [1] } };
    const validation = validateArguments("t", z.object({ payload: z.any() }), raw) as { valid: true; value: typeof raw };
    expect(validation.value).toStrictEqual(raw);
    expect(validation.value.payload).not.toBe(raw.payload);
  });

  it("gives an Observable of the outcome when the validator answers with a Promise", async () => {
    const schema = z.object({ name: z.string().refine(async (name) => name !== "taken", "name is taken") });
    const accepted = validateArguments("register", schema, { name: "free" });
    expect(accepted).toBeInstanceOf(Observable);
    expect(await lastValueFrom(accepted as Observable<unknown>)).toStrictEqual({ valid: true, value: { name: "free" } });
    expect(await lastValueFrom(validateArguments("register", schema, { name: "taken" }) as Observable<unknown>)).toStrictEqual({
      valid: false,
      message: 'Invalid arguments for tool "register":\n  - /name: name is taken (received "taken")\nReceived arguments: {"name":"taken"}',
    });
  });

  it("gives the model the JSON Schema of the library's own converter, without $schema", () => {
    expect(compileSchema(z.object({ a: z.number().describe("first") })).modelSchema).toStrictEqual({
      type: "object",
      properties: { a: { type: "number", description: "first" } },
      required: ["a"],
    });
    expect(compileSchema(toStandardJsonSchema(v.object({ a: v.string() }))).modelSchema).toStrictEqual({
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
    });
  });

  it("reports a Standard Schema without a JSON Schema converter when the tool is defined, naming the tool", () => {
    expect(() => defineTool({ name: "plain_valibot", description: "", parameters: v.object({ a: v.string() }), execute: () => textResult("") })).toThrow(
      'Tool "plain_valibot" has parameters that cannot be used as a schema: the valibot schema offers no JSON Schema for the model (no ~standard.jsonSchema); wrap it in a Standard JSON Schema (valibot: toStandardJsonSchema from @valibot/to-json-schema)',
    );
    expect(() => defineTool({ name: "zod3", description: "", parameters: z3.object({ a: z3.string() }), execute: () => textResult("") })).toThrow(
      'Tool "zod3" has parameters that cannot be used as a schema: the zod schema offers no JSON Schema for the model (no ~standard.jsonSchema); use zod 4: import { z } from "zod/v4" (zod 3.25 and later ship it) or upgrade to zod 4',
    );
    expect(() => defineTool({ name: "custom", description: "", parameters: z.object({ when: z.date() }), execute: () => textResult("") })).toThrow(
      /^Tool "custom" has parameters that cannot be used as a schema: Date cannot be represented in JSON Schema/,
    );
    expect(() => defineTool({ name: "broken", description: "", parameters: { type: 5 }, execute: () => textResult("") })).toThrow(
      /^Tool "broken" has parameters that cannot be used as a schema: schema is invalid/,
    );
  });

  it("types execute's arguments from each kind of schema", () => {
    defineTool({
      name: "zod",
      description: "",
      parameters: z.object({ a: z.number(), tags: z.array(z.string()).default([]) }),
      execute: (_id, args) => {
        expectTypeOf(args).toEqualTypeOf<{ a: number; tags: string[] }>();
        return textResult("");
      },
    });
    defineTool({
      name: "valibot",
      description: "",
      parameters: toStandardJsonSchema(v.object({ a: v.number(), b: v.optional(v.string()) })),
      execute: (_id, args) => {
        expectTypeOf(args).toEqualTypeOf<{ a: number; b?: string | undefined }>();
        return textResult("");
      },
    });
    defineTool({
      name: "typebox",
      description: "",
      parameters: Type.Object({ a: Type.Number() }),
      execute: (_id, args) => {
        expectTypeOf(args).toEqualTypeOf<{ a: number }>();
        return textResult("");
      },
    });
    defineTool({
      name: "json",
      description: "",
      parameters: Type1.Object({ a: Type1.Number() }),
      execute: (_id, args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
        return textResult("");
      },
    });
    expectTypeOf(z.object({})).toExtend<StandardSchemaV1>();
  });
});
