import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: the hooks are plain JavaScript, loaded by Node's module.register (no types).
import { load, resolve } from "../../bench/typescript-hooks.mjs";

const directory = mkdtempSync(join(tmpdir(), "rxagent-typescript-hooks-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

type Load = (url: string, context: object, nextLoad: (url: string) => Promise<unknown>) => Promise<{ format: string; source: string }>;
type Resolve = (specifier: string, context: { parentURL?: string }, nextResolve: (specifier: string) => Promise<{ url: string }>) => Promise<{ url: string }>;

describe("bench/typescript-hooks.mjs", () => {
  it("compiles TypeScript without keepNames: no __name wrapper around named closures", async () => {
    const file = join(directory, "adapter.ts");
    writeFileSync(file, "export function make(): () => number {\n  const emit = (): number => 1;\n  return emit;\n}\nexport class Slot { value: number | undefined; }\n");
    const { format, source } = await (load as Load)(pathToFileURL(file).href, {}, () => Promise.reject(new Error("not reached")));
    expect(format).toBe("module");
    expect(source).not.toContain("__name");
    // As tsc compiles src/ (ES2022): a declared field is defined on the instance.
    expect(source).toMatch(/class Slot \{\s*value;/);
  });

  it("passes other files on to the next loader", async () => {
    const passed = await (load as Load)("node:fs", {}, (url) => Promise.resolve({ passed: url }));
    expect(passed).toEqual({ passed: "node:fs" });
  });

  it("resolves a TypeScript file's ./x.js import to ./x.ts, and only from TypeScript", async () => {
    const parentURL = pathToFileURL(join(directory, "adapter.ts")).href;
    const nextResolve = (specifier: string) => (specifier.endsWith(".ts") ? Promise.resolve({ url: specifier }) : Promise.reject(new Error(`not found: ${specifier}`)));
    await expect((resolve as Resolve)("./workloads.js", { parentURL }, nextResolve)).resolves.toEqual({ url: "./workloads.ts" });
    await expect((resolve as Resolve)("./workloads.js", { parentURL: pathToFileURL(join(directory, "x.mjs")).href }, nextResolve)).rejects.toThrow("not found");
    await expect((resolve as Resolve)("some-package", { parentURL }, nextResolve)).rejects.toThrow("not found");
  });
});
