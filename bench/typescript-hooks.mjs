/**
 * Module hooks that run the bench's TypeScript (and `src/`'s, where a bench imports it) as
 * esbuild compiles it without `keepNames`; registered by typescript-loader.mjs.
 *
 * Why not tsx: tsx compiles with `keepNames`, which wraps every named closure in `__name`, an
 * `Object.defineProperty` of its `name` each time the closure is made. The adapters make such
 * closures per run and per model call, which neither published package does: about 1 µs of a
 * one-turn run of 3.4 µs on rxagent's side, and most of the floor's (bench/README.md, "The
 * harness's own closures").
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { transform } from "esbuild";

/** A relative `./x.js` written for a TypeScript file `./x.ts` (the bench's and src's imports). */
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const fromTypeScript = context.parentURL?.endsWith(".ts") === true;
    if (!fromTypeScript || !specifier.startsWith(".") || !specifier.endsWith(".js")) throw error;
    return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
  }
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith(".ts") || !url.startsWith("file:")) return nextLoad(url, context);
  const source = await readFile(fileURLToPath(url), "utf8");
  const { code } = await transform(source, {
    loader: "ts",
    format: "esm",
    target: "node20",
    sourcemap: "inline",
    sourcefile: fileURLToPath(url),
    // As tsc compiles src/ (tsconfig.json: ES2022, so class fields are defined, not assigned).
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: true, verbatimModuleSyntax: true } },
  });
  return { format: "module", source: code, shortCircuit: true };
}
