import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment for npm and the installed package: the caller's, less the variables npm set
 * for the script that runs the tests (they would describe this repository, not the consumer),
 * less OpenAI settings (the bin must pick its offline demo), with this Node first on PATH so a
 * `#!/usr/bin/env node` bin runs on the Node that runs the tests (Node 24 in CI's second pass).
 */
export function consumerEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    const fromNpmScript = name.startsWith("npm_") && !["npm_config_cache", "npm_config_registry", "npm_config_userconfig"].includes(name);
    if (!fromNpmScript && !name.startsWith("OPENAI_") && name !== "INIT_CWD") environment[name] = value;
  }
  environment["PATH"] = `${path.dirname(process.execPath)}${path.delimiter}${process.env["PATH"] ?? ""}`;
  return { ...environment, NO_COLOR: "1", ...extra };
}

/** Runs a command to its end and collects its output (never rejects on a non-zero exit). */
export function run(command: string, args: string[], options: { cwd: string; input?: string; environment?: NodeJS.ProcessEnv }): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.environment ?? consumerEnvironment(), stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** Like `run`, but a non-zero exit is an error that shows the output. */
export async function succeed(command: string, args: string[], options: { cwd: string; input?: string; environment?: NodeJS.ProcessEnv }): Promise<Finished> {
  const finished = await run(command, args, options);
  if (finished.code !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with ${finished.code}\n${finished.stdout}\n${finished.stderr}`);
  }
  return finished;
}

/** npm from PATH (run by this Node: see `consumerEnvironment`); a failure shows its output. */
export function npm(args: string[], cwd: string): Promise<Finished> {
  return succeed("npm", args, { cwd });
}

/** Every installed package under `node_modules` (scoped ones as `@scope/name`, nested ones too). */
export function installedPackages(nodeModules: string): string[] {
  const names: string[] = [];
  for (const entry of safeList(nodeModules)) {
    if (entry.startsWith(".")) continue;
    const folders = entry.startsWith("@") ? safeList(path.join(nodeModules, entry)).map((name) => `${entry}/${name}`) : [entry];
    for (const name of folders) {
      names.push(name);
      names.push(...installedPackages(path.join(nodeModules, name, "node_modules")));
    }
  }
  return names.sort();
}

/** Bytes of every file under a folder. */
export function folderSize(folder: string): number {
  let total = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

function safeList(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}
