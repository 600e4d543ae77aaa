import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { consumerEnvironment, run, type Finished } from "../consumer.js";

/** One isolated pi installation's home: its own HOME, agent dir (models.json, sessions) and working folder. */
export interface PiHome {
  cli: string;
  home: string;
  agentDir: string;
  cwd: string;
}

/**
 * Makes a home for pi under `root`: HOME and `PI_CODING_AGENT_DIR` point inside it (nothing
 * touches the real home), its models.json names one OpenAI-compatible provider, "fake", at
 * `baseUrl`, and its working folder holds `notes.txt` for pi's `read` tool.
 */
export function piHome(root: string, cli: string, baseUrl: string): PiHome {
  const home = path.join(root, "home");
  const agentDir = path.join(root, "agent");
  const cwd = path.join(root, "work");
  for (const folder of [home, agentDir, cwd]) mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(cwd, "notes.txt"), "the secret is 42\n");
  const provider = {
    baseUrl,
    api: "openai-completions",
    apiKey: "fake-key",
    compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
    models: [{ id: "fake-model", name: "Fake", reasoning: false, input: ["text"], contextWindow: 32000, maxTokens: 4000 }],
  };
  writeFileSync(path.join(agentDir, "models.json"), JSON.stringify({ providers: { fake: provider } }, null, 2));
  return { cli, home, agentDir, cwd };
}

function environment(pi: PiHome): NodeJS.ProcessEnv {
  return consumerEnvironment({ HOME: pi.home, PI_CODING_AGENT_DIR: pi.agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1" });
}

const modelArguments = ["--provider", "fake", "--model", "fake-model"];

/** Runs `pi <args>` to its end. */
export function runPi(pi: PiHome, args: string[]): Promise<Finished> {
  return run(process.execPath, [pi.cli, ...modelArguments, ...args], { cwd: pi.cwd, environment: environment(pi) });
}

/** A line pi's RPC mode wrote: an event, or a command's response. */
export type RpcLine = { type: string; [field: string]: unknown };

/** pi in `--mode rpc`: commands in, JSON lines out. */
export class PiRpc {
  readonly lines: RpcLine[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly watchers: (() => void)[] = [];
  private buffered = "";
  stderr = "";

  constructor(pi: PiHome) {
    this.child = spawn(process.execPath, [pi.cli, ...modelArguments, "--mode", "rpc"], { cwd: pi.cwd, env: environment(pi), stdio: "pipe" });
    this.child.stderr.setEncoding("utf8").on("data", (chunk: string) => (this.stderr += chunk));
    this.child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      // RPC framing is LF only (docs/rpc.md), so no readline.
      this.buffered += chunk;
      const records = this.buffered.split("\n");
      this.buffered = records.pop() ?? "";
      for (const record of records) if (record.trim() !== "") this.lines.push(JSON.parse(record.replace(/\r$/, "")) as RpcLine);
      for (const watcher of [...this.watchers]) watcher();
    });
  }

  send(command: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
  }

  /** Resolves once `count` lines satisfy `predicate` (waits for the event, never a fixed time). */
  until(predicate: (line: RpcLine) => boolean, count = 1): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.lines.filter(predicate).length < count) return;
        this.watchers.splice(this.watchers.indexOf(check), 1);
        resolve();
      };
      this.watchers.push(check);
      check();
    });
  }

  /** Sends a command and waits for its successful response. */
  async command(command: Record<string, unknown>): Promise<void> {
    const id = `command-${this.lines.length}-${Math.random().toString(36).slice(2)}`;
    this.send({ ...command, id });
    await this.until((line) => line.type === "response" && line["id"] === id);
    const response = this.lines.find((line) => line.type === "response" && line["id"] === id)!;
    if (response["success"] !== true) throw new Error(`pi refused ${JSON.stringify(command)}: ${JSON.stringify(response)}`);
  }

  /** Closes stdin and waits for pi to exit. */
  close(): Promise<number | null> {
    return new Promise((resolve) => {
      this.child.on("close", (code) => resolve(code));
      this.child.stdin.end();
      // RPC mode keeps running on an open terminal; a closed stdin is its signal to stop, else stop it.
      setTimeout(() => this.child.kill("SIGTERM"), 10_000).unref();
    });
  }
}

/**
 * An event as the comparison sees it: its type, the message's role, the final stop reason of a
 * finished message, the model event's type, and the text of user and finished messages.
 * Partial messages' fields are left out: the reference copies pi-ai's live message when it reads
 * the event, so a partial may already show a later chunk's stop reason (a race, not behaviour).
 */
export function eventShape(line: RpcLine): string {
  const message = line["message"] as { role?: string; stopReason?: string; content?: unknown } | undefined;
  const parts = [line.type];
  if (message !== undefined) parts.push(message.role ?? "?");
  if (line.type === "message_update") parts.push((line["assistantMessageEvent"] as { type: string }).type);
  if ((line.type === "message_end" || line.type === "turn_end") && message?.stopReason !== undefined) parts.push(message.stopReason);
  if (line.type === "message_end" && message !== undefined) parts.push(JSON.stringify(textOfMessage(message.content)));
  if (line.type.startsWith("tool_execution")) parts.push(String(line["toolName"]), line.type === "tool_execution_end" ? `isError=${String(line["isError"])}` : "");
  if (line.type === "agent_end") parts.push(`${(line["messages"] as unknown[]).length} messages`);
  return parts.filter((part) => part !== "").join(" ");
}

function textOfMessage(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type: string; text?: string; name?: string }) => (part.type === "text" ? part.text : part.type === "toolCall" ? `[call ${part.name}]` : ""))
    .join("");
}
