import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { repositoryRoot } from "../cli/cli-process.js";

/**
 * A test's time for a fresh process through tsx: about 2 s on a quiet 2-core machine, 38 s seen
 * at a load average of 25, past the suite's 30 s default.
 */
export const FRESH_PROCESS_TIMEOUT_MS = 120_000;

/** A `src/` module's file URL, as a string literal for a script. */
export const sourceUrl = (file: string): string => JSON.stringify(pathToFileURL(path.join(repositoryRoot, "src", file)).href);

/**
 * Runs an ESM script (TypeScript, through tsx) in a fresh Node process, where nothing is loaded
 * yet: what a module loads on first use is seen only there. `hide` makes packages fail to
 * resolve, as if not installed; `nodeOptions` go to Node itself (`--allow-natives-syntax`).
 */
export function runScript(script: string, options: { hide?: readonly string[]; nodeOptions?: readonly string[] } = {}): { status: number | null; stdout: string; stderr: string } {
  // Under node_modules, so that the script's own imports (rxjs, TypeBox) resolve as for a user of the package.
  const scratch = path.join(repositoryRoot, "node_modules", ".cache");
  mkdirSync(scratch, { recursive: true });
  const folder = mkdtempSync(path.join(scratch, "rxagent-fresh-"));
  const hooks: string[] = [];
  if (options.hide?.length) {
    const hidden = path.join(folder, "hide.mjs");
    writeFileSync(
      hidden,
      `const hidden = ${JSON.stringify(options.hide)};
export async function resolve(specifier, context, next) {
  const name = hidden.find((name) => specifier === name || specifier.startsWith(name + "/"));
  if (name) throw Object.assign(new Error("Cannot find package '" + name + "'"), { code: "ERR_MODULE_NOT_FOUND" });
  return next(specifier, context);
}\n`,
    );
    const register = path.join(folder, "register.mjs");
    writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hidden).href)});\n`);
    hooks.push("--import", register);
  }
  const scriptFile = path.join(folder, "script.mts");
  writeFileSync(scriptFile, script);
  try {
    const result = spawnSync(process.execPath, [...(options.nodeOptions ?? []), ...hooks, "--import", "tsx", scriptFile], { cwd: repositoryRoot, encoding: "utf8", timeout: FRESH_PROCESS_TIMEOUT_MS });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
