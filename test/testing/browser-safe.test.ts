import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const sourceRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");

/** Every module a source file reaches through its imports, relative ones followed. */
function reachableImports(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)[^"'`;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)) {
      const specifier = match[1] ?? match[2]!;
      if (specifier.startsWith(".")) visit(path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return { files: [...files].map((file) => path.relative(sourceRoot, file)).sort(), packages: [...packages].sort() };
}

describe("rxagent/testing", () => {
  it("reaches no Node module, so it bundles for a browser; cassette files live in rxagent/testing/node", () => {
    const { files, packages } = reachableImports(path.join(sourceRoot, "testing/index.ts"));
    const nodeModules = packages.filter((name) => name.startsWith("node:") || builtinModules.includes(name));
    expect(nodeModules).toStrictEqual([]);
    expect(files.filter((file) => file.startsWith("testing/node"))).toStrictEqual([]);
    expect(reachableImports(path.join(sourceRoot, "testing/node/index.ts")).packages).toContain("node:fs");
  });
});
