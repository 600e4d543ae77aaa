import type { Static, TSchema } from "@sinclair/typebox";
import type { StandardSchemaV1 } from "./standard-schema.js";

/**
 * A JSON Schema object (draft 2020-12 or draft-07): what MCP servers send, TypeBox 1.x builds,
 * or a JSON file holds. Why `object`: such schemas come typed as interfaces (TypeBox's `TObject`)
 * or not at all, and an index-signature type would refuse the interfaces.
 */
export type JsonSchema = object;

/**
 * What a tool's `parameters` may be: a TypeBox 0.34 schema (compiled with TypeBox's own
 * compiler), any other JSON Schema object (validated with Ajv, loaded at the first such schema),
 * or a Standard Schema validator such as zod 4 or valibot (validated through `~standard.validate`).
 */
export type ToolParameters = TSchema | JsonSchema | StandardSchemaV1;

/**
 * The arguments `execute` gets for a schema: the output type of a Standard Schema, `Static` of a
 * TypeBox 0.34 schema, and a plain record for JSON Schema (TypeBox 1.x users can cast with its
 * own `Static`).
 */
export type ArgumentsOf<TParameters> = TParameters extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<TParameters>
  : TParameters extends TSchema
    ? Static<TParameters>
    : Record<string, unknown>;

/** How a schema is validated. */
export type SchemaKind = "typebox" | "standard" | "json-schema";

/**
 * TypeBox 0.34's `Kind`, which it creates with `Symbol.for`. Why not imported: importing it loads
 * TypeBox's whole type builder (about 250 modules in Node) into every `import("rxagent")`.
 */
const typeBoxKind = Symbol.for("TypeBox.Kind");

/** Tells the kinds apart: TypeBox 0.34 marks its schemas with a `Kind` symbol, Standard Schema with `~standard`. */
export function schemaKindOf(schema: object): SchemaKind {
  if (typeBoxKind in schema) return "typebox";
  if ("~standard" in schema) return "standard";
  return "json-schema";
}
