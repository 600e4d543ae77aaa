/**
 * Run by ioredis-majors.test.ts from a folder where another ioredis major is installed: this file
 * is copied there, so `ioredis` resolves to that install, while rxagent comes from this repository
 * (argv[2]). The sessions get their connections from that ioredis (`redis` as a connection).
 * Prints one JSON line: the ioredis version, the roles a prompt left in the transcript, and how
 * long `close()` took while Redis was down.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Redis } from "ioredis";

const repository = process.argv[2];
if (!repository) throw new Error("usage: ioredis-check.ts <repository root>");
const from = (relative: string): Promise<Record<string, unknown>> => import(pathToFileURL(path.join(repository, relative)).href) as Promise<Record<string, unknown>>;

const { redisSessions, RedisTranscriptStore } = (await from("src/redis/index.ts")) as typeof import("../../src/redis/index.js");
const { serveAgents } = (await from("src/server/index.ts")) as typeof import("../../src/server/index.js");
const { Agent } = (await from("src/agent/agent.ts")) as typeof import("../../src/agent/agent.js");
const { scriptedModel } = (await from("src/testing/scripted-model.ts")) as typeof import("../../src/testing/scripted-model.js");
const { RawClient, waitFor } = (await from("test/server/helpers.ts")) as typeof import("../server/helpers.js");
const { RedisServerProcess } = (await from("test/redis/redis-server.ts")) as typeof import("../redis/redis-server.js");

const version = (createRequire(import.meta.url)("ioredis/package.json") as { version: string }).version;
// The types come from this repository's ioredis; at run time the connection is the other major's.
type RepositoryRedis = Exclude<Parameters<typeof redisSessions>[0]["redis"], string>;

const redisServer = await RedisServerProcess.start();
const sessions = redisSessions({
  redis: new Redis(redisServer.url) as unknown as RepositoryRedis,
  createAgent: (_id, store) => Agent.open({ store, model: scriptedModel(["Hello from Redis."]) }),
});
const server = await serveAgents({ port: 0, ...sessions.serveOptions });
const client = await RawClient.open(server.url);
await client.request({ type: "attach", session: "round-trip" });
await client.request({ type: "prompt", input: "Hi" });
await waitFor(() => client.hasEvent("agent_end"), "the run to end", 30_000);
const reader = new Redis(redisServer.url);
const roles = (await new RedisTranscriptStore(reader as unknown as RepositoryRedis, "round-trip").load()).map((message) => message.role);
reader.disconnect();
await client.close();
await server.close();
await sessions.close();
await redisServer.stop();

// close() while Redis is down.
const lonely = await RedisServerProcess.start();
const stranded = redisSessions({ redis: new Redis(lonely.url) as unknown as RepositoryRedis, onWarning: () => undefined, createAgent: () => new Agent({ model: scriptedModel([]) }) });
await stranded.hostSession("closing");
await lonely.stop();
const started = performance.now();
await stranded.close();
const closeMs = Math.round(performance.now() - started);

process.stdout.write(`${JSON.stringify({ version, roles, closeMs })}\n`);
process.exit(0);
