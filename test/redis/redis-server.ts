import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const REDIS_SERVER = "/usr/bin/redis-server";
export const hasRedisServer = existsSync(REDIS_SERVER);

/** A real redis-server on a free port with a data folder of its own; `restart` keeps port and data. */
export class RedisServerProcess {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly folder: string,
    /** `always`: what Redis acknowledged is on disk (the tests); `everysec`: Redis's usual setting (the bench). */
    readonly appendfsync: "always" | "everysec",
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(appendfsync: "always" | "everysec" = "always"): Promise<RedisServerProcess> {
    const server = new RedisServerProcess(await freePort(), mkdtempSync(path.join(tmpdir(), "rxagent-redis-")), appendfsync);
    await server.launch();
    return server;
  }

  /** Stops the server (SHUTDOWN-like: SIGTERM, which with appendonly flushes) and starts it again on the same port and data. */
  async restart(): Promise<void> {
    await this.stopProcess();
    await this.launch();
  }

  /** Stops the server (SIGKILL: as a crash, with what `appendfsync` already synced) and keeps its port and data for `up`: Redis is down until then. */
  async down(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    await this.stopProcess(signal);
  }

  /** Starts the server again after `down`. */
  async up(): Promise<void> {
    await this.launch();
  }

  /** Pauses the server (SIGSTOP): connections stay open and nothing is answered until `resume`, as a stalled server. */
  pause(): void {
    this.child?.kill("SIGSTOP");
  }

  resume(): void {
    this.child?.kill("SIGCONT");
  }

  async stop(): Promise<void> {
    await this.stopProcess();
    rmSync(this.folder, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const child = spawn(REDIS_SERVER, ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.folder, "--save", "", "--appendonly", "yes", "--appendfsync", this.appendfsync], { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    let output = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start within 20 s:\n${output}`)), 20_000);
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${output}`));
      });
    });
  }

  private async stopProcess(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill(signal);
    });
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls an async `check` until it gives a value (a state in Redis), for at most `timeoutMs`. */
export async function pollUntil<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
