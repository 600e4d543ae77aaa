import { spawn } from "node:child_process";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";

/** Process start through tsx on a loaded machine can take a while. */
const START_TIMEOUT_MS = 60_000;

describe.skipIf(!hasRedisServer)("Redis refusing the channels again after a reconnect", () => {
  let redisServer: RedisServerProcess;
  let admin: Redis;

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
    admin = new Redis(redisServer.url);
  }, 30_000);

  afterAll(async () => {
    admin?.disconnect();
    await redisServer?.stop();
  });

  // ioredis subscribes again by itself after a reconnect, with a promise nobody catches: when Redis
  // refuses it (here NOPERM, an ACL changed meanwhile; or the connection drops again before the
  // answer) Node ends the process on the unhandled rejection (exit code 1, before the fix).
  it("warns that it could not subscribe again, and the process lives on", async () => {
    await admin.call("ACL", "SETUSER", "agent", "on", ">secret", "~*", "&*", "+@all");
    const url = `redis://agent:secret@127.0.0.1:${redisServer.port}`;
    const child = spawn(process.execPath, ["--import", "tsx", "test/redis/resubscribe-refused-child.ts", url], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const printed = (line: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => (output.includes(`${line}\n`) ? resolve() : undefined);
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString();
          check();
        });
        child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
        exited.then(() => reject(new Error(`the process ended before it printed "${line}":\n${output}`)));
        check();
      });
    try {
      await printed("listening");
      await admin.call("ACL", "SETUSER", "agent", "resetchannels");
      await admin.call("CLIENT", "KILL", "USER", "agent");
      await printed("alive");
      child.stdin.end();
      expect(await exited).toBe(0);
      expect(output).toMatch(/warning: Redis: could not subscribe again after reconnecting: .*NOPERM/);
    } finally {
      child.kill("SIGKILL");
    }
  }, START_TIMEOUT_MS);
});
