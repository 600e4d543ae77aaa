import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasRedisServer } from "../redis/redis-server.js";
import { npm, repositoryRoot, succeed } from "./consumer.js";

// The peer range is `^5.9 || ^6`: the devDependency (5.9.3) runs every Redis test; this installs
// the other major from the registry and runs a session round trip and close() while Redis is
// down on it. Its own tier (npm run test:package): it needs the registry.

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe.skipIf(!hasRedisServer)("rxagent/redis on each ioredis major of the peer range", () => {
  it("ioredis 6: a prompt's messages reach the transcript, and close() while Redis is down finishes", async () => {
    const folder = mkdtempSync(path.join(tmpdir(), "rxagent-ioredis-6-"));
    folders.push(folder);
    writeFileSync(path.join(folder, "package.json"), JSON.stringify({ name: "ioredis-check", private: true, type: "module" }));
    await npm(["install", "--no-audit", "--no-fund", "ioredis@6"], folder);
    copyFileSync(path.join(repositoryRoot, "test/package/ioredis-check.ts"), path.join(folder, "ioredis-check.ts"));
    const { stdout } = await succeed(process.execPath, ["--import", "tsx", path.join(folder, "ioredis-check.ts"), repositoryRoot], { cwd: repositoryRoot });
    const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as { version: string; roles: string[]; closeMs: number };
    expect(result.version).toMatch(/^6\./);
    expect(result.roles).toStrictEqual(["user", "assistant"]);
    // close() waits at most about 2 s for a QUIT; without the bound it never finished on ioredis 6.
    expect(result.closeMs).toBeLessThan(30_000);
  });
});
