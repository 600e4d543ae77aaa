import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { redisSessions, type RedisSessionsOptions } from "../../src/redis/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { RawClient } from "../server/helpers.js";
import { RedisServerProcess } from "./redis-server.js";

/** What a test closes after it, in order. */
export type Closing = (() => Promise<void>)[];

/** A server of sessions on Redis in this test process; `closing` closes it, then its connections. */
export async function servedSessions(options: RedisSessionsOptions, closing: Closing): Promise<AgentServer> {
  const sessions = redisSessions(options);
  const server = await serveAgents({ port: 0, ...sessions.serveOptions });
  closing.push(async () => {
    await server.close();
    await sessions.close();
  });
  return server;
}

/** A client attached to `session` on `url`, closed before the servers. */
export async function attachedClient(url: string, session: string, closing: Closing): Promise<RawClient> {
  const client = await RawClient.open(url);
  closing.unshift(() => client.close());
  expect(await client.request({ type: "attach", session })).toMatchObject({ type: "ack", session });
  return client;
}

/**
 * The Redis server of a describe block's tests, started before them and stopped after them, and
 * what each test closes after it (`closing`, emptied in order after each test).
 */
export function useRedisServer(): { redisServer: () => RedisServerProcess; closing: Closing } {
  let server: RedisServerProcess | undefined;
  const closing: Closing = [];
  beforeAll(async () => {
    server = await RedisServerProcess.start();
  }, 30_000);
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return { redisServer: () => server as RedisServerProcess, closing };
}
