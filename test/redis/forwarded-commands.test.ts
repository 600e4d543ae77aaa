import { Type } from "@sinclair/typebox";
import { Redis } from "ioredis";
import { asyncScheduler } from "rxjs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type AgentClient, connectAgent } from "../../src/client/index.js";
import { redisSessions, RedisTranscriptStore } from "../../src/redis/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { waitFor } from "../server/helpers.js";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";

const LONG_REPLY = Array.from({ length: 60 }, (_, index) => `word${index}`).join(" ");

const deploy = defineTool({
  name: "deploy",
  description: "Deploys",
  parameters: Type.Object({}),
  needsApproval: true,
  execute: () => textResult("deployed"),
});

describe.skipIf(!hasRedisServer)("commands from a client of another process reach the run (connectAgent clients)", () => {
  let redisServer: RedisServerProcess;
  const closing: (() => Promise<void>)[] = [];
  const clients: AgentClient[] = [];

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
  }, 30_000);

  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const close of closing.splice(0)) await close();
  });

  afterAll(async () => {
    await redisServer?.stop();
  });

  async function serve(): Promise<AgentServer> {
    const sessions = redisSessions({
      redis: redisServer.url,
      leaseMs: 2000,
      createAgent: (_id, store) =>
        Agent.open({
          store,
          tools: [deploy],
          model: scriptedModel([{ content: [{ type: "toolCall", id: "d1", name: "deploy", arguments: {} }, { type: "toolCall", id: "d2", name: "deploy", arguments: {} }] }, LONG_REPLY, "Followed up."], { scheduler: asyncScheduler, delay: 5 }),
        }),
    });
    const server = await serveAgents({ port: 0, ...sessions.serveOptions });
    closing.push(async () => {
      await server.close();
      await sessions.close();
    });
    return server;
  }

  function connect(server: AgentServer, session: string): AgentClient {
    const client = connectAgent(server.url, { session, WebSocket });
    clients.push(client);
    return client;
  }

  it("approve, deny and follow_up from B reach A's run; B's snapshot shows the calls waiting; abort from B ends the next run", async () => {
    const [serverA, serverB] = [await serve(), await serve()];
    const onA = connect(serverA, "approvals");
    await onA.ready;
    await onA.prompt("deploy twice");
    await waitFor(() => onA.state.pendingApprovals.length === 2, "two calls waiting for approval", 20_000);
    const onB = connect(serverB, "approvals");
    await onB.ready;
    // B's snapshot comes from B's mirror of the session, rebuilt from the frames in Redis.
    await waitFor(() => onB.state.pendingApprovals.length === 2, "B's snapshot with the waiting calls", 20_000);
    expect(onB.state.pendingApprovals.map((pending) => pending.toolCallId)).toStrictEqual(["d1", "d2"]);
    await onB.approve("d1");
    await onB.deny("d2", "not today");
    await waitFor(() => onB.state.streamingMessage !== undefined, "the reply after the tool results to stream", 20_000);
    await onB.followUp("one more thing");
    await waitFor(() => !onA.state.isStreaming && onA.state.messages.length === 7, "the run to end with the follow-up answered", 20_000);
    await waitFor(() => !onB.state.isStreaming && onB.state.messages.length === 7, "B to see the same end", 20_000);
    expect(onB.state.messages).toStrictEqual(onA.state.messages);
    expect(onA.state.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "toolResult", "assistant", "user", "assistant"]);
    expect(onA.state.messages.slice(2, 4).map((message) => (message.role === "toolResult" ? [message.toolCallId, message.isError, message.content] : []))).toStrictEqual([
      ["d1", false, [{ type: "text", text: "deployed" }]],
      ["d2", true, [{ type: "text", text: "Tool call was denied: not today" }]],
    ]);

    await onA.prompt("deploy again");
    await waitFor(() => onB.state.pendingApprovals.length === 2, "the next run's calls waiting", 20_000);
    await onB.abort();
    await waitFor(() => !onA.state.isStreaming && onA.state.messages.length === 11, "the aborted run to end", 20_000);
    expect(onA.state.messages.slice(7).map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "toolResult"]);
    const redis = new Redis(redisServer.url);
    const stored = await new RedisTranscriptStore(redis, "approvals").load();
    redis.disconnect();
    expect(stored).toStrictEqual(onA.state.messages);
  }, 60_000);
});
