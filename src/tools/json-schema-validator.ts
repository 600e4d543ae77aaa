import { Ajv, type Options, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { invalidArgumentsText, pointerOf } from "./argument-errors.js";
import { copyArguments } from "./copy-arguments.js";
import { patternEngine } from "./pattern-engine.js";
import type { ArgumentValidation } from "./schema-validator.js";

/**
 * The TypeBox path's rules in Ajv's words: strings become the numbers, booleans or strings a
 * schema asks for (Ajv coerces "4.5" to no integer, so no number changes value), missing
 * properties get their defaults, every failing path is reported. Formats are annotations, as
 * draft 2020-12 has them (no format validator ships with the core), unknown keywords are allowed
 * (MCP servers send their own), and schemas with an `$id` are not registered, so two servers
 * may use the same one. Patterns run in time linear in the text (`patternEngine`).
 */
const ajvOptions: Options = {
  coerceTypes: true,
  useDefaults: true,
  allErrors: true,
  strict: false,
  validateFormats: false,
  addUsedSchema: false,
  logger: false,
  code: { regExp: patternEngine },
};

/**
 * How many schemas one Ajv compiles before the next one gets a fresh Ajv. Why: an Ajv keeps every
 * schema it compiled, and what the code made from it, for its whole life (about 3.6 KB a schema,
 * measured; `removeSchema` frees only part of it), so agents made per session, or an MCP server
 * whose tool list keeps changing, grew the heap without end. A validator made before keeps its
 * Ajv alive only as long as the validator is. Why 64: a fresh Ajv costs about 18 ms before its
 * first schema (it compiles the meta-schema), about 0.3 ms a schema spread over 64; 64 schemas
 * hold about 230 KB.
 */
export const SCHEMAS_PER_AJV = 64;

/** One draft's Ajv, made afresh every `SCHEMAS_PER_AJV` schemas. */
class RecycledAjv {
  private ajv: Ajv | undefined;
  private compiled = 0;

  constructor(private readonly create: () => Ajv) {}

  compile(schema: object): ValidateFunction {
    if (this.ajv === undefined || this.compiled >= SCHEMAS_PER_AJV) {
      this.ajv = this.create();
      this.compiled = 0;
    }
    this.compiled += 1;
    return this.ajv.compile(schema);
  }
}

const draft2020 = new RecycledAjv(() => new Ajv2020(ajvOptions));
const draft07 = new RecycledAjv(() => new Ajv(ajvOptions));

/**
 * Validates against a plain JSON Schema object (draft 2020-12 or draft-07, as MCP servers send
 * them; TypeBox 1.x schemas are such objects) with Ajv, compiled here once.
 *
 * A schema whose `$schema` names draft-07 (or -06) is compiled as draft-07; any other as draft
 * 2020-12, falling back to draft-07 for the older forms (`items` as an array) that 2020-12
 * refuses. Throws when neither compiles. Only `json-schema-loader.ts` (dynamically) and
 * `rxagent/json-schema` import this module: it is the one that loads Ajv.
 */
export function jsonSchemaValidator(schema: object): (toolName: string, argumentsValue: object) => ArgumentValidation {
  const validateFunction = compileJsonSchema(schema);
  return (toolName, argumentsValue): ArgumentValidation => {
    // Ajv coerces and fills defaults in place: it gets the tool's own copy.
    const value = copyArguments(argumentsValue);
    if (validateFunction(value)) return { valid: true, value };
    const issues = (validateFunction.errors ?? []).map((error) => ({
      path:
        error.keyword === "required"
          ? `${error.instancePath}${pointerOf([(error.params as { missingProperty: string }).missingProperty])}`
          : error.keyword === "additionalProperties"
            ? `${error.instancePath}${pointerOf([(error.params as { additionalProperty: string }).additionalProperty])}`
            : error.instancePath,
      message: error.message ?? error.keyword,
    }));
    return { valid: false, message: invalidArgumentsText(toolName, issues, value, argumentsValue) };
  };
}

/**
 * The `$id` a schema without one is compiled under. Why: Ajv resolves `$ref: "#"` (a schema that
 * refers to itself as a whole) through the schemas it registers, and it registers none here.
 */
const OWN_ID = "rxagent:tool-parameters";

function compileJsonSchema(schema: object): ValidateFunction {
  const rooted = "$id" in schema ? schema : { $id: OWN_ID, ...schema };
  const declared = (schema as { $schema?: unknown }).$schema;
  if (typeof declared === "string" && /draft-0[67]/.test(declared)) return draft07.compile(rooted);
  try {
    return draft2020.compile(rooted);
  } catch (error) {
    try {
      return draft07.compile(rooted);
    } catch {
      throw error;
    }
  }
}
