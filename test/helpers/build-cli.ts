import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The CLI bundled once for the run; `test/cli/cli-process.ts` starts it with plain `node`. */
    cliEntry: string;
  }
}

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Vitest's global setup: bundles `src/cli/main.ts` once, so the ~70 tests that start the CLI run
 * plain `node` instead of `node --import tsx`, which transpiled the CLI's whole module graph at every
 * start (`--help`: 2.6 s through tsx, 0.8 s bundled, at load 10). The npm packages stay external and
 * resolve from the repository's node_modules; `--import tsx` itself stays tested by npm-start.test.ts.
 * Why two levels below the root: the web server finds `examples/web/` at `../../` from its own module.
 */
export default async function buildCli(project: TestProject): Promise<() => void> {
  const outdir = mkdtempSync(path.join(repositoryRoot, "node_modules", ".rxagent-cli-"));
  await build({
    entryPoints: { main: path.join(repositoryRoot, "src/cli/main.ts") },
    bundle: true,
    // Keeps the CLI's lazy imports lazy (the OpenAI provider, the server, OpenTelemetry), as under tsx.
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    outdir,
    logLevel: "warning",
  });
  project.provide("cliEntry", path.join(outdir, "main.js"));
  return () => rmSync(outdir, { recursive: true, force: true });
}
