import { Redis } from "ioredis";
import { asyncScheduler } from "rxjs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { redisSessions, type RedisSessions } from "../../src/redis/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { Agent } from "../../src/streams/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { assertContiguous, RawClient, waitFor } from "../server/helpers.js";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";

const LONG_REPLY = Array.from({ length: 40 }, (_, index) => `word${index}`).join(" ");

describe.skipIf(!hasRedisServer)("sessions shared by two servers through Redis", () => {
  let redisServer: RedisServerProcess;
  const opened: { sessions: RedisSessions; server: AgentServer }[] = [];
  const clients: RawClient[] = [];

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
  }, 30_000);

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    for (const { server, sessions } of opened.splice(0)) {
      await server.close();
      await sessions.close();
    }
  });

  afterAll(async () => {
    await redisServer?.stop();
  });

  async function serve(leaseMs = 2000): Promise<AgentServer> {
    const sessions = redisSessions({
      redis: redisServer.url,
      leaseMs,
      createAgent: (_id, store) => Agent.open({ store, model: scriptedModel([LONG_REPLY, "Steered."], { scheduler: asyncScheduler, delay: 5 }) }),
    });
    const server = await serveAgents({ port: 0, ...sessions.serveOptions });
    opened.push({ sessions, server });
    return server;
  }

  async function client(server: AgentServer, session: string): Promise<RawClient> {
    const connected = await RawClient.open(server.url);
    clients.push(connected);
    expect(await connected.request({ type: "attach", session })).toMatchObject({ type: "ack", session, resume: "snapshot" });
    return connected;
  }

  it("a client of B steers the run of A and sees every event A's client sees, in order", async () => {
    const [serverA, serverB] = [await serve(), await serve()];
    const onA = await client(serverA, "steer");
    const onB = await client(serverB, "steer");
    expect(await onA.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => onB.hasEvent("message_update"), "B to see A's run");
    expect(await onB.request({ type: "steer", input: "change course" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => onA.hasEvent("agent_end") && onB.hasEvent("agent_end"), "both clients to see the run end", 20_000);
    assertContiguous(onA.events(), 0);
    expect(onB.events()).toStrictEqual(onA.events());
    expect(onA.agentEvents().filter((event) => event.type === "message_end").map((event) => (event.type === "message_end" ? event.message.role : ""))).toStrictEqual(["user", "assistant", "user", "assistant"]);
    const redis = new Redis(redisServer.url);
    const transcript = (await redis.lrange("rxagent:{steer}:transcript", 0, -1)).map((line) => JSON.parse(line) as { role: string });
    redis.disconnect();
    expect(transcript.map((message) => message.role)).toStrictEqual(["user", "assistant", "user", "assistant"]);
  }, 30_000);
});
