import { Type } from "@sinclair/typebox";
import { Redis } from "ioredis";
import { asyncScheduler } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { withSessionScripts } from "../../src/redis/redis-scripts.js";
import { redisSessions, RedisTranscriptStore, TAKEOVER_TEXT } from "../../src/redis/index.js";
import { serveAgents } from "../../src/server/index.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentMessage } from "../../src/types.js";
import { RawClient, waitFor } from "../server/helpers.js";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";

const calc = defineTool({ name: "calc", description: "Computes", parameters: Type.Object({}), execute: () => textResult("42") });

/** Whatever process asks: a prompt gets the call, the call's result the answer. */
const reply: ScriptedTurn = (context) => (context.messages.at(-1)?.role === "toolResult" ? "It is 42." : { content: [{ type: "toolCall", id: "c1", name: "calc", arguments: {} }] });

describe.skipIf(!hasRedisServer)("takeovers under faults", () => {
  let redisServer: RedisServerProcess;
  let reader: Redis;

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
    reader = new Redis(redisServer.url);
  }, 30_000);

  afterAll(async () => {
    reader?.disconnect();
    await redisServer?.stop();
  });

  // Seen in the chaos test (seed 28, 20 runs: 3 message_end frames, 4 transcript messages): the
  // runner's transcript append and the message's frame are two scripts, and its lease expired
  // between them. Here the lease is deleted between them, on the runner's own connection.
  it("a lease lost between a transcript append and its frame: the takeover tells the message the transcript got: stream and transcript agree, the tool's real result is kept", async () => {
    const cutting = withSessionScripts(new Redis(redisServer.url));
    const appendFrame = cutting.rxagentAppendFrame.bind(cutting);
    let cut = false;
    cutting.rxagentAppendFrame = (lease, ...rest) => {
      const [, , , , type, json] = rest;
      if (!cut && type === "message_end" && json.includes('"role":"toolResult"')) {
        cut = true;
        void cutting.del(lease);
      }
      return appendFrame(lease, ...rest);
    };
    const serve = async (redis: string | Redis) => {
      const sessions = redisSessions({ redis, leaseMs: 1000, onWarning: () => undefined, createAgent: (_id, store) => Agent.open({ store, tools: [calc], model: scriptedModel([reply, reply], { scheduler: asyncScheduler, delay: 5 }) }) });
      return { sessions, server: await serveAgents({ port: 0, ...sessions.serveOptions }) };
    };
    const processes = [await serve(cutting), await serve(redisServer.url)];
    const clients = await Promise.all(processes.map(({ server }) => RawClient.open(server.url)));
    try {
      for (const client of clients) await client.request({ type: "attach", session: "cut" });
      expect(await clients[0]!.request({ type: "prompt", input: "What is it?" })).toMatchObject({ type: "ack" });
      await waitFor(() => clients[1]!.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the takeover to end the run", 20_000);
      expect(cut).toBe(true);
      expect(clients[1]!.agentEvents().filter((event) => event.type === "agent_end")).toStrictEqual([
        { type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT },
        expect.objectContaining({ type: "agent_end", reason: "idle" }),
      ]);
      const transcript = await new RedisTranscriptStore(reader, "cut").load();
      const streamed = (await reader.xrange("rxagent:{cut}:events", "-", "+")).flatMap(([, fields]) => {
        const frame = JSON.parse(fields[3] as string) as { event?: { type: string; message?: AgentMessage } };
        return frame.event?.type === "message_end" && frame.event.message ? [frame.event.message] : [];
      });
      expect(transcript.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
      expect(transcript[2]).toMatchObject({ role: "toolResult", toolCallId: "c1", isError: false, content: [{ type: "text", text: "42" }] });
      expect(streamed).toStrictEqual(transcript);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      for (const { server, sessions } of processes) {
        await server.close();
        await sessions.close();
      }
    }
  }, 60_000);

  it("Redis fails a takeover midway (it restarts): nothing is published, the lease expires, and the next takeover ends the dead run and goes on", async () => {
    const redis = withSessionScripts(new Redis(redisServer.url));
    // What a runner leaves when killed right after its run started (the prompt stored, the run's
    // start marked, its first frames), with its lease expired.
    await redis.rpush("rxagent:{midway}:transcript", JSON.stringify({ role: "user", content: "What is it?", timestamp: 1 }));
    await redis.hset("rxagent:{midway}:meta", "epoch", "e1", "runSeq", "0", "runLength", "0");
    await redis.xadd("rxagent:{midway}:events", "1-0", "t", "agent_start", "f", '{"type":"event","seq":1,"event":{"type":"agent_start"}}');
    await redis.xadd("rxagent:{midway}:events", "2-0", "t", "turn_start", "f", '{"type":"event","seq":2,"event":{"type":"turn_start"}}');
    // The first takeover's count fails, as a command does when Redis goes away under it.
    const countTakeover = redis.rxagentCountTakeover.bind(redis);
    let failed = false;
    redis.rxagentCountTakeover = (...args) => {
      if (failed) return countTakeover(...args);
      failed = true;
      return Promise.reject(new Error("Connection is closed."));
    };
    const warnings: string[] = [];
    const sessions = redisSessions({ redis, leaseMs: 1000, onWarning: (text) => warnings.push(text), createAgent: (_id, store) => Agent.open({ store, tools: [calc], model: scriptedModel([reply, reply], { scheduler: asyncScheduler, delay: 5 }) }) });
    const server = await serveAgents({ port: 0, ...sessions.serveOptions });
    const client = await RawClient.open(server.url);
    try {
      await client.request({ type: "attach", session: "midway" });
      await waitFor(() => client.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the takeover to end the dead run and finish it", 20_000);
      expect(failed).toBe(true);
      expect(warnings).toContain("session midway: could not take over: Connection is closed.");
      expect(client.agentEvents().filter((event) => event.type === "agent_end")).toStrictEqual([
        { type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT },
        expect.objectContaining({ type: "agent_end", reason: "idle" }),
      ]);
      // The release follows the run's last frame: polled, as Redis holds it.
      for (const deadline = Date.now() + 20_000; (await reader.exists("rxagent:{midway}:lease")) !== 0; await new Promise((resolve) => setTimeout(resolve, 20))) {
        if (Date.now() > deadline) throw new Error("Timed out waiting for the lease to go back");
      }
      expect((await new RedisTranscriptStore(reader, "midway").load()).map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    } finally {
      await client.close();
      await server.close();
      await sessions.close();
    }
  }, 60_000);
});
