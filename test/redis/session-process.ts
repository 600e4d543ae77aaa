import { type ChildProcess, spawn } from "node:child_process";
import { waitFor } from "../server/helpers.js";

/** Process start through tsx on a loaded machine can take a while. */
const START_MS = 60_000;

/** A process serving sessions on Redis (test/redis/session-process-child.ts), its URL and what it printed. */
export interface SessionProcess {
  child: ChildProcess;
  url: string;
  stdout(): string;
  exited: Promise<unknown>;
}

export async function startProcess(redisUrl: string, mode: "normal" | "hang" | "crash" | "wait", leaseMs: number): Promise<SessionProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/redis/session-process-child.ts", redisUrl, mode, String(leaseMs)], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await waitFor(() => /URL (\S+)/.exec(output)?.[1], "the child process to listen", START_MS);
  return { child, url, stdout: () => output, exited };
}

/** SIGKILLs the process, as a crash: nothing of it runs after. */
export async function kill(process: SessionProcess): Promise<void> {
  process.child.kill("SIGKILL");
  await process.exited;
}
