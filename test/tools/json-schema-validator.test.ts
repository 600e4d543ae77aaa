import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { jsonSchemaValidator, SCHEMAS_PER_AJV } from "../../src/tools/json-schema-validator.js";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

describe("jsonSchemaValidator", () => {
  // Ajv resolves "#" through the schemas it registers, and it registers none here (two servers may
  // send the same $id): a schema with no $id that refers to itself could not be used at all.
  it("takes a schema that refers to itself as a whole ($ref: \"#\"), in both drafts", () => {
    const tree = { type: "object", properties: { value: { type: "integer" }, child: { $ref: "#" } } };
    for (const schema of [tree, { $schema: "http://json-schema.org/draft-07/schema#", ...tree }]) {
      const validate = jsonSchemaValidator(schema);
      expect(validate("tree", { value: "1", child: { value: 2, child: { value: "3" } } })).toStrictEqual({ valid: true, value: { value: 1, child: { value: 2, child: { value: 3 } } } });
      expect(validate("tree", { child: { child: { value: "x" } } })).toMatchObject({ valid: false, message: expect.stringContaining("/child/child/value") });
    }
  });

  // One Ajv kept every schema it compiled for the life of the process: 3.6 KB each here, so an
  // agent made per session, or an MCP server whose tool list changes, grew the heap without end.
  it(`holds a schema no longer than its validator and the next ${SCHEMAS_PER_AJV} schemas compiled`, async () => {
    const properties = new WeakRef(compileAndDrop());
    for (let schema = 0; schema < SCHEMAS_PER_AJV; schema++) compileAndDrop();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(properties.deref()).toBeUndefined();
  });
});

/** Compiles a fresh schema, uses its validator once, and returns the schema's `properties` object. */
function compileAndDrop(): object {
  const properties = { name: { type: "string", minLength: 1 } };
  const validate = jsonSchemaValidator({ type: "object", properties, required: ["name"] });
  expect(validate("named", { name: "a" })).toMatchObject({ valid: true });
  return properties;
}
