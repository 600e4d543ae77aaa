import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import type { AgentEvent } from "../../src/types.js";

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The environment without any OpenAI settings, so the CLI picks the demo model. */
export function demoEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", TZ: "UTC" };
  for (const name of Object.keys(environment)) if (name.startsWith("OPENAI_")) delete environment[name];
  return { ...environment, ...extra };
}

/** A running CLI with its output collected as it arrives. */
export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves once `predicate(stdout)` holds; rejects after `timeoutMs`. */
  waitFor(predicate: (stdout: string) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** The stdout lines parsed as events (for `--json`). */
  events(): AgentEvent[];
}

/** Spawns a command (default: the CLI as bundled once by test/helpers/build-cli.ts) with piped stdio. */
export function startCli(args: string[], options: { command?: string; environment?: NodeJS.ProcessEnv } = {}): CliProcess {
  const command = options.command ?? process.execPath;
  const fullArgs = options.command ? args : [inject("cliEntry"), ...args];
  const child = spawn(command, fullArgs, { cwd: repositoryRoot, env: options.environment ?? demoEnvironment(), stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    for (const waiter of [...waiters]) waiter();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    events: () =>
      stdout
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as AgentEvent),
    waitFor(predicate, timeoutMs = 20_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate(stdout)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`Timed out waiting for output. stdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

/** Splits a JSON event stream into runs, each from agent_start to agent_end. */
export function runsOf(events: AgentEvent[]): AgentEvent[][] {
  const runs: AgentEvent[][] = [];
  for (const event of events) {
    if (event.type === "agent_start") runs.push([]);
    runs[runs.length - 1]?.push(event);
  }
  return runs;
}
