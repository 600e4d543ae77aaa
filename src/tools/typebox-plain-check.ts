import { copyArguments } from "./copy-arguments.js";
import type { QuickValidator } from "./lazy-compiler.js";

/**
 * A validator that accepts, without TypeBox's compiler, the arguments a plain TypeBox 0.34
 * schema accepts: objects, arrays, strings, numbers, integers, booleans, null, literals and
 * unions of them, with no constraint keywords (`minLength`, `pattern`, `default`, ...).
 * `undefined` for any other schema. Its answer is `undefined` (ask the compiler) for every
 * value it does not accept, so conversions, defaults and error messages stay the compiler's.
 *
 * Why: most tool schemas are this plain, and most calls match them. Loading the compiler (126
 * modules of TypeBox's compiler and value functions) cost the first W2 run of a fresh process
 * 20-45 ms of CPU, about a fifth with Promise tools (`npm run bench:cold`, bench/README.md,
 * 2026-12-03); with this check a process whose calls all match never loads it.
 *
 * Each rule is TypeBox's compiled check (`compiler.mjs`, 0.34) under its default
 * `TypeSystemPolicy`, or stricter: a value it accepts passes `TypeCompiler.Check` whatever the
 * policy, and comes back as the compiler's validator returns it (a copy).
 */
export function plainTypeBoxValidator(schema: object): QuickValidator | undefined {
  const accepts = acceptorOf(schema);
  if (!accepts) return undefined;
  return (_toolName, argumentsValue) => (accepts(argumentsValue) ? { valid: true, value: copyArguments(argumentsValue) } : undefined);
}

type Acceptor = (value: unknown) => boolean;
type Node = Record<string | symbol, unknown>;

// TypeBox makes these with `Symbol.for`; importing them would load TypeBox.
const kindKey = Symbol.for("TypeBox.Kind");
/** Marks that change nothing in a check: `Optional` is read through the parent's `required`. */
const neutralSymbols = new Set([kindKey, Symbol.for("TypeBox.Optional"), Symbol.for("TypeBox.Readonly"), Symbol.for("TypeBox.Hint")]);
/** Keywords that change nothing in a check. Why not `examples`: its values may hold a `default` key, which sends the compiler's validator down its defaults path. */
const annotations = ["description", "title", "$comment"];
/** The keywords each kind may carry, besides the annotations; any other keyword makes the schema not plain. */
const keywordsOf = new Map<unknown, readonly string[]>([
  ["Object", ["type", "properties", "required", "additionalProperties"]],
  ["Array", ["type", "items"]],
  ["String", ["type"]],
  ["Number", ["type"]],
  ["Integer", ["type"]],
  ["Boolean", ["type"]],
  ["Null", ["type"]],
  ["Literal", ["type", "const"]],
  ["Union", ["anyOf"]],
]);

function acceptorOf(schema: unknown): Acceptor | undefined {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return undefined;
  const node = schema as Node;
  const kind = node[kindKey];
  const keywords = keywordsOf.get(kind);
  if (!keywords) return undefined;
  if (Object.getOwnPropertySymbols(node).some((symbol) => !neutralSymbols.has(symbol))) return undefined;
  // Own names, not keys: a keyword made non-enumerable still counts.
  if (Object.getOwnPropertyNames(node).some((keyword) => !keywords.includes(keyword) && !annotations.includes(keyword))) return undefined;
  switch (kind) {
    case "Object":
      return objectAcceptor(node);
    case "Array": {
      const item = node.type === "array" ? acceptorOf(node.items) : undefined;
      return item && ((value) => Array.isArray(value) && everyElement(value, item));
    }
    case "String":
      return node.type === "string" ? (value) => typeof value === "string" : undefined;
    case "Number":
      // TypeBox's default policy: NaN and Infinity fail (`AllowNaN` can only widen that).
      return node.type === "number" ? (value) => Number.isFinite(value) : undefined;
    case "Integer":
      return node.type === "integer" ? (value) => Number.isInteger(value) : undefined;
    case "Boolean":
      return node.type === "boolean" ? (value) => typeof value === "boolean" : undefined;
    case "Null":
      return node.type === "null" ? (value) => value === null : undefined;
    case "Literal": {
      const constant = node.const;
      const literal = typeof constant === "string" || typeof constant === "number" || typeof constant === "boolean";
      return literal && node.type === typeof constant ? (value) => value === constant : undefined;
    }
    case "Union": {
      if (!Array.isArray(node.anyOf) || node.anyOf.length === 0) return undefined;
      const members = node.anyOf.map(acceptorOf);
      if (members.some((member) => member === undefined)) return undefined;
      return (value) => members.some((member) => member!(value));
    }
  }
  return undefined;
}

/** Why not `every`: it skips an array's holes, which TypeBox's `for...of` checks as `undefined`. */
function everyElement(array: unknown[], accepts: Acceptor): boolean {
  for (const element of array) if (!accepts(element)) return false;
  return true;
}

/** An object's check as TypeBox compiles it: required members, present optional ones, and `additionalProperties: false`. */
function objectAcceptor(node: Node): Acceptor | undefined {
  const { properties, required, additionalProperties } = node;
  if (node.type !== "object" || typeof properties !== "object" || properties === null) return undefined;
  if (required !== undefined && !(Array.isArray(required) && required.every((key) => typeof key === "string"))) return undefined;
  if (additionalProperties !== undefined && additionalProperties !== false) return undefined;
  const knownKeys = Object.getOwnPropertyNames(properties);
  // A member named "default" sends the compiler's validator down its defaults path.
  if (knownKeys.includes("default")) return undefined;
  const members: { key: string; required: boolean; accepts: Acceptor }[] = [];
  for (const key of knownKeys) {
    const accepts = acceptorOf((properties as Node)[key]);
    if (!accepts) return undefined;
    members.push({ key, required: required?.includes(key) ?? false, accepts });
  }
  const closed = additionalProperties === false;
  const exactCount = closed && required?.length === knownKeys.length;
  return (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
    const record = value as Node;
    for (const member of members) {
      // Read as TypeBox reads it (`value.key`, prototype included).
      const item = record[member.key];
      if (member.required || item !== undefined) {
        if (!member.accepts(item)) return false;
      } else if (member.key in record) {
        // Present but undefined: passes or fails by `ExactOptionalPropertyTypes`; the compiler decides.
        return false;
      }
    }
    if (!closed) return true;
    const names = Object.getOwnPropertyNames(record);
    return exactCount ? names.length === knownKeys.length : names.every((name) => knownKeys.includes(name));
  };
}
