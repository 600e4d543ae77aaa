import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import type { Implementation } from "./implementations/implementation.js";
import { createRxagent, rxagentAt } from "./implementations/rxagent.js";

const benchDirectory = dirname(fileURLToPath(import.meta.url));
const sourceDirectory = join(benchDirectory, "..", "src");
const buildDirectory = join(benchDirectory, ".build", "src");

/**
 * Transpiles `src/` to plain JavaScript in `bench/.build/src` (as `tsc` would, file by file) and
 * returns the path of its `index.js` (`from` and `to`: another source tree and build, for bench/ab.ts).
 *
 * Why: the build is what a user runs, JavaScript as tsc writes it, and the reference runs from
 * its published JavaScript too. (Through tsx, `src/` paid esbuild's `keepNames`, an
 * `Object.defineProperty` per named closure made, which rxagent makes per event and per call;
 * the bench's own files now load without it, typescript-hooks.mjs.)
 */
export function buildRxagent(from = sourceDirectory, to = buildDirectory): string {
  const files = readdirSync(from, { recursive: true, encoding: "utf8" }).filter(
    (file) => file.endsWith(".ts") && !file.endsWith(".d.ts"),
  );
  for (const file of files) {
    const source = readFileSync(join(from, file), "utf8");
    const output = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        verbatimModuleSyntax: true,
        sourceMap: false,
      },
    });
    const target = join(to, file.replace(/\.ts$/, ".js"));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output.outputText);
  }
  return join(to, "index.js");
}

/** The built `index.js` (`buildRxagent` must have run). */
export function builtRxagent(): string {
  return join(buildDirectory, "index.js");
}

/** Where a built file lives, for messages. */
export function describeBuild(): string {
  return relative(process.cwd(), buildDirectory);
}

/**
 * rxagent as JavaScript transpiled from `src/` (`"build"`, what the bench measures; see
 * `buildRxagent`) or run from the TypeScript sources through tsx (`"source"`).
 */
export async function loadRxagent(from: "build" | "source"): Promise<Implementation> {
  return from === "build" ? rxagentAt(buildRxagent()) : createRxagent(await import("../src/index.js"));
}
