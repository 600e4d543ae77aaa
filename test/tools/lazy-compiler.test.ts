import { firstValueFrom, isObservable } from "rxjs";
import { describe, expect, it } from "vitest";
import { lazyCompiler, type QuickValidator, type SchemaCompiler } from "../../src/tools/lazy-compiler.js";

const names = { schema: "a test schema", compiler: "the test compiler" };

/** A compiler whose load is counted and settles when the test says. */
function controlledLoad() {
  let loads = 0;
  let arrive: (compiler: SchemaCompiler) => void = () => undefined;
  const compiler: SchemaCompiler = () => (_toolName, argumentsValue) => ({ valid: true, value: { compiled: argumentsValue } });
  const load = () => {
    loads += 1;
    return new Promise<SchemaCompiler>((resolve) => (arrive = resolve));
  };
  return { load, loads: () => loads, arrive: () => arrive(compiler) };
}

/** Covers schemas marked `plain`, and answers only for arguments `{ ok: true }`. */
const quick = (schema: object): QuickValidator | undefined =>
  "plain" in schema ? (_toolName, argumentsValue) => ("ok" in argumentsValue ? { valid: true, value: { quick: argumentsValue } } : undefined) : undefined;

describe("lazyCompiler with a quick validator", () => {
  it("starts no load for a schema the quick validator covers, answers its calls at once, and loads at the first call it cannot answer", async () => {
    const { load, loads, arrive } = controlledLoad();
    const { compiled } = lazyCompiler(names, load, quick);
    const { validate } = compiled({ plain: true });
    expect(loads()).toBe(0);
    expect(validate("tool", { ok: true })).toStrictEqual({ valid: true, value: { quick: { ok: true } } });
    expect(loads()).toBe(0);
    const waiting = validate("tool", { other: 1 });
    expect(isObservable(waiting)).toBe(true);
    const answer = firstValueFrom(waiting as Exclude<typeof waiting, { valid: boolean }>);
    expect(loads()).toBe(1);
    arrive();
    expect(await answer).toStrictEqual({ valid: true, value: { compiled: { other: 1 } } });
    // Once the compiler is there it answers every call, also those the quick validator covers.
    expect(validate("tool", { ok: true })).toStrictEqual({ valid: true, value: { compiled: { ok: true } } });
  });

  it("starts the load at a schema the quick validator does not cover, as without one", () => {
    const { load, loads } = controlledLoad();
    lazyCompiler(names, load, quick).compiled({ other: true });
    expect(loads()).toBe(1);
  });
});

describe("lazyCompiler while its compiler loads", () => {
  // It was answered as "its validator (the test compiler) could not be loaded: Maximum call stack size exceeded".
  it("passes on what a loaded validator throws as the call's error, not as a failed load", async () => {
    const throwing: SchemaCompiler = () => () => {
      throw new RangeError("Maximum call stack size exceeded");
    };
    const { validate } = lazyCompiler(names, () => Promise.resolve(throwing)).compiled({});
    const waiting = validate("tool", {});
    expect(isObservable(waiting)).toBe(true);
    await expect(firstValueFrom(waiting as Exclude<typeof waiting, { valid: boolean }>)).rejects.toThrow("Maximum call stack size exceeded");
  });

  it("answers a call with why, when the compiler could not be loaded", async () => {
    const { validate } = lazyCompiler(names, () => Promise.reject(new Error("no such module"))).compiled({});
    const waiting = validate("tool", {});
    expect(await firstValueFrom(waiting as Exclude<typeof waiting, { valid: boolean }>)).toStrictEqual({
      valid: false,
      message: 'Tool "tool" has a test schema, and its validator (the test compiler) could not be loaded: no such module',
    });
  });
});
