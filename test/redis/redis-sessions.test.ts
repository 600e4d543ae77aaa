import { Type } from "@sinclair/typebox";
import { Redis, type RedisOptions } from "ioredis";
import { asyncScheduler } from "rxjs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { redisSessions, type RedisSessions, type RedisSessionsOptions, RedisTranscriptStore, SESSION_MOVED_TEXT, TAKEOVER_TEXT } from "../../src/redis/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import type { Model } from "../../src/types.js";
import { assertContiguous, isEventCarrier, RawClient, waitFor } from "../server/helpers.js";
import { hasRedisServer, pollUntil, RedisServerProcess } from "./redis-server.js";
import { waitTool } from "./wait-tool.js";


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

describe.skipIf(!hasRedisServer)("sessions on Redis: bad input and odd states", () => {
  let redisServer: RedisServerProcess;
  const closing: (() => Promise<void>)[] = [];
  const clients: RawClient[] = [];

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
  }, 30_000);

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    for (const close of closing.splice(0)) await close();
  });

  afterAll(async () => {
    await redisServer?.stop();
  });

  async function serve(url = redisServer.url, warnings: string[] = [], redisOptions: RedisOptions = {}): Promise<AgentServer> {
    const sessions = redisSessions({
      redis: new Redis(url, redisOptions),
      leaseMs: 1000,
      onWarning: (text) => warnings.push(text),
      createAgent: (_id, store) => Agent.open({ store, model: scriptedModel([LONG_REPLY, "Again."], { scheduler: asyncScheduler, delay: 5 }) }),
    });
    const server = await serveAgents({ port: 0, ...sessions.serveOptions });
    closing.push(async () => {
      await server.close();
      await sessions.close();
    });
    return server;
  }

  /** One process on a Redis of the test's own (the test takes it down and up), with the wait tool, and a client attached to `session`. */
  async function waitingOnOwnRedis(session: string, model: Model, options: Pick<RedisSessionsOptions, "leaseMs" | "saveTimeoutMs" | "onWarning">) {
    const own = await RedisServerProcess.start();
    const { wait, toolStarted } = waitTool();
    const sessions = redisSessions({ redis: own.url, ...options, createAgent: (_id, store) => Agent.open({ store, tools: [wait], model }) });
    const server = await serveAgents({ port: 0, ...sessions.serveOptions });
    closing.push(async () => {
      await server.close();
      await sessions.close();
      await own.stop();
    });
    return { own, client: await attached(server, session), toolStarted };
  }

  async function attached(server: AgentServer, session: string): Promise<RawClient> {
    const connected = await RawClient.open(server.url);
    clients.push(connected);
    await connected.request({ type: "attach", session });
    return connected;
  }

  it("a command that needs a live run, for a session no process runs: invalid_state; an abort: ack", async () => {
    const client = await attached(await serve(), "idle");
    expect(await client.request({ type: "steer", input: "hello?" })).toStrictEqual({ type: "error", id: "t2", code: "invalid_state", message: 'Cannot steer: no run of this session is live (send "prompt" to start one).' });
    expect(await client.request({ type: "approve", toolCallId: "call-1" })).toStrictEqual({ type: "error", id: "t3", code: "invalid_state", message: 'Cannot approve: no run of this session is live (send "prompt" to start one).' });
    expect(await client.request({ type: "abort" })).toStrictEqual({ type: "ack", id: "t4" });
    expect(client.eventTypes()).toStrictEqual([]);
  }, 30_000);

  it("a malformed message on a session's command channel is ignored with a warning, and the run goes on", async () => {
    const warnings: string[] = [];
    const server = await serve(redisServer.url, warnings);
    const client = await attached(server, "garbage");
    expect(await client.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    const redis = new Redis(redisServer.url);
    expect(await redis.publish("rxagent:{garbage}:commands", '{"command":{"type":"steer"},"replyChannel":"x","replyId":"y"}')).toBe(1);
    redis.disconnect();
    await waitFor(() => client.hasEvent("agent_end"), "the run to end", 20_000);
    expect(warnings).toStrictEqual(["session garbage: ignored a malformed forwarded command."]);
    expect(client.agentEvents().filter((event) => event.type === "agent_end")).toMatchObject([{ type: "agent_end", reason: "idle" }]);
  }, 30_000);

  it("malformed replies on a process's reply channel are ignored with a warning; the process goes on serving", async () => {
    const warnings: string[] = [];
    const server = await serve(redisServer.url, warnings);
    // Attaching waits for the process's subscriptions, its reply channel's first.
    const client = await attached(server, "after-garbage");
    const redis = new Redis(redisServer.url);
    const channels = (await redis.pubsub("CHANNELS", "rxagent:process:*")) as string[];
    expect(channels).toHaveLength(1);
    for (const garbage of ["not json", "null", '{"replyId":7}', '{"replyId":"unknown","frame":{}}']) {
      expect(await redis.publish(channels[0]!, garbage)).toBe(1);
    }
    redis.disconnect();
    expect(await client.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => client.hasEvent("agent_end"), "the run to end", 20_000);
    expect(warnings).toStrictEqual([`Redis: a malformed reply on ${channels[0]!} was ignored: not json`]);
  }, 30_000);

  it("ready() resolves when Redis answers, and rejects naming the URL when nothing listens there", async () => {
    const answering = redisSessions({ redis: redisServer.url, createAgent: () => new Agent({ model: scriptedModel([]) }) });
    await expect(answering.ready()).resolves.toBeUndefined();
    await answering.close();
    // Port 1: nothing listens there, so every connection is refused.
    const url = "redis://127.0.0.1:1";
    const silent = redisSessions({ redis: url, onWarning: () => undefined, createAgent: () => new Agent({ model: scriptedModel([]) }) });
    await expect(silent.ready(300)).rejects.toThrow(`Redis at ${url} did not answer within 300 ms.`);
    await silent.close();
  }, 30_000);

  it("a reset from a client of B starts a new epoch for the clients of A too, and empties the transcript", async () => {
    const [serverA, serverB] = [await serve(), await serve()];
    const onA = await attached(serverA, "reset");
    const onB = await attached(serverB, "reset");
    expect(await onA.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => onA.hasEvent("agent_end") && onB.hasEvent("agent_end"), "the run to end", 20_000);
    const [firstEpoch] = onA.frames.filter((frame) => frame.type === "snapshot").map((frame) => (frame as { epoch: string }).epoch);
    expect(await onB.request({ type: "reset" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => onA.frames.filter((frame) => frame.type === "snapshot").length === 2, "A's client to get a snapshot", 20_000);
    const snapshotOnA = onA.frames.filter((frame) => frame.type === "snapshot")[1] as unknown as { seq: number; epoch: string; state: { messages: unknown[] } };
    expect(snapshotOnA.epoch).not.toBe(firstEpoch);
    expect(snapshotOnA.state.messages).toStrictEqual([]);
    const redis = new Redis(redisServer.url);
    expect(await redis.llen("rxagent:{reset}:transcript")).toBe(0);
    redis.disconnect();
  }, 30_000);

  it("a run whose runner died before anyone watched: the first process to open the session takes it over and goes on", async () => {
    const redis = new Redis(redisServer.url);
    // What a runner leaves when killed right after its run started: the prompt stored, agent_start
    // and the prompt's events in the stream, the run's start marked, and a lease that expired.
    const prompt = { role: "user", content: "go", timestamp: 1 };
    await redis.rpush("rxagent:{orphan}:transcript", JSON.stringify(prompt));
    await redis.hset("rxagent:{orphan}:meta", "epoch", "e1", "runSeq", "0", "runLength", "0");
    await redis.xadd("rxagent:{orphan}:events", "1-0", "t", "agent_start", "f", '{"type":"event","seq":1,"event":{"type":"agent_start"}}');
    await redis.xadd("rxagent:{orphan}:events", "2-0", "t", "turn_start", "f", '{"type":"event","seq":2,"event":{"type":"turn_start"}}');
    redis.disconnect();
    const client = await attached(await serve(), "orphan");
    await waitFor(() => client.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the takeover to end the dead run and finish a new one", 20_000);
    const ends = client.agentEvents().filter((event) => event.type === "agent_end");
    expect(ends[0]).toStrictEqual({ type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT });
    expect(ends[1]).toMatchObject({ type: "agent_end", reason: "idle" });
    assertContiguous(client.events(), 2);
    const check = new Redis(redisServer.url);
    const transcript = (await check.lrange("rxagent:{orphan}:transcript", 0, -1)).map((line) => JSON.parse(line) as { role: string });
    check.disconnect();
    expect(transcript.map((message) => message.role)).toStrictEqual(["user", "assistant"]);
  }, 30_000);

  it("a runner whose lease is taken stops its run, its clients start again from a snapshot, and the run is taken over", async () => {
    const warnings: string[] = [];
    const client = await attached(await serve(redisServer.url, warnings), "stolen");
    expect(await client.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => client.hasEvent("message_update"), "the reply to stream", 20_000);
    const redis = new Redis(redisServer.url);
    // Another process's token, as if this one had paused past its lease; it expires in turn.
    await redis.set("rxagent:{stolen}:lease", "another process", "PX", 300);
    redis.disconnect();
    await waitFor(() => client.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the takeover's two agent_ends", 20_000);
    expect(warnings).toStrictEqual(["session stolen: stopped its run here: its lease was taken by another process."]);
    expect(client.frames.filter((frame) => frame.type === "snapshot").length).toBe(2);
    const ends = client.agentEvents().filter((event) => event.type === "agent_end");
    expect(ends[0]).toStrictEqual({ type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT });
    expect(ends[1]).toMatchObject({ type: "agent_end", reason: "idle" });
    const after = client.frames.slice(client.frames.findLastIndex((frame) => frame.type === "snapshot"));
    assertContiguous(after.filter(isEventCarrier), (after[0] as { seq: number }).seq);
  }, 30_000);

  it("a runner that loses its lease while a tool runs: the tool's signal fires with a reason saying the session moved", async () => {
    const heard: unknown[] = [];
    const watch = defineTool({
      name: "watch",
      description: "Runs until its signal fires",
      parameters: Type.Object({}),
      execute: (_id, _args, { signal }) =>
        new Promise<ReturnType<typeof textResult>>((resolve) => {
          signal.addEventListener("abort", () => {
            heard.push(signal.reason);
            resolve(textResult("stopped"));
          });
        }),
    });
    let started = false;
    const sessions = redisSessions({
      redis: redisServer.url,
      leaseMs: 1000,
      onWarning: () => undefined,
      createAgent: (_id, store) =>
        Agent.open({
          store,
          tools: [watch],
          model: scriptedModel([(context) => (context.messages.at(-1)?.role === "toolResult" ? "Done." : ((started = true), { content: [{ type: "toolCall", id: "w1", name: "watch", arguments: {} }] }))], { scheduler: asyncScheduler, delay: 5 }),
        }),
    });
    const server = await serveAgents({ port: 0, ...sessions.serveOptions });
    closing.push(async () => {
      await server.close();
      await sessions.close();
    });
    const client = await attached(server, "moved");
    expect(await client.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => client.hasEvent("tool_execution_start") && started, "the tool to start", 20_000);
    const redis = new Redis(redisServer.url);
    // Another process's token, as if this one had paused past its lease.
    await redis.set("rxagent:{moved}:lease", "another process", "PX", 60_000);
    redis.disconnect();
    await waitFor(() => heard.length > 0, "the tool's signal to fire", 20_000);
    expect(heard).toStrictEqual([new Error(SESSION_MOVED_TEXT)]);
    expect(String(heard[0])).toBe("Error: The session moved to another process: this process lost its lease, so its run stopped here.");
  }, 30_000);

  // Its first use failed far from the factory: "Cannot read properties of undefined (reading 'subscribe')".
  it("a createAgent that returns something that is not an Agent: the prompt that needs it gets an error saying so", async () => {
    const sessions = redisSessions({ redis: redisServer.url, leaseMs: 1000, onWarning: () => undefined, createAgent: () => ({}) as Agent });
    const server = await serveAgents({ port: 0, ...sessions.serveOptions });
    closing.push(async () => {
      await server.close();
      await sessions.close();
    });
    const client = await RawClient.open(server.url);
    clients.push(client);
    expect(await client.request({ type: "attach", session: "not-an-agent" })).toMatchObject({ type: "ack" });
    expect(await client.request({ type: "prompt", input: "go" })).toMatchObject({
      type: "error",
      code: "internal",
      message: "createAgent failed: it returned an object without subscribe(), not an Agent.",
    });
  }, 30_000);

  it("Redis down: attaching gets an error naming the cause, and the server keeps serving", async () => {
    const lonely = await RedisServerProcess.start();
    const warnings: string[] = [];
    const server = await serve(lonely.url, warnings, { maxRetriesPerRequest: 1 });
    await lonely.stop();
    const client = await RawClient.open(server.url);
    clients.push(client);
    // Waits for the events, however long a loaded machine takes (ioredis retries once, with its backoff).
    const id = client.send({ type: "attach", session: "down" });
    const reply = await waitFor(() => client.frames.find((frame) => (frame.type === "ack" || frame.type === "error") && frame.id === id), "the attach to be answered", 30_000);
    expect(reply).toMatchObject({ type: "error", code: "internal" });
    expect((reply as { message: string }).message).toMatch(/^Could not open the session: /);
    // The subscriber's failed subscription (ioredis retries once) may be told first, at load.
    const warning = await waitFor(() => warnings.find((text) => text.endsWith("; reconnecting.")), "the warning about the connection", 30_000);
    expect(warning).toMatch(/^Redis: .*; reconnecting\.$/);
    expect(client.socket.readyState).toBe(client.socket.OPEN);
  }, 60_000);

  it("Redis restarted mid-run: the tool result and the reply made while it was down reach the transcript, and the stream agrees", async () => {
    const warnings: string[] = [];
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] }, "All done."], { scheduler: asyncScheduler, delay: 5 });
    // The lease is long enough to outlive the restart: this process keeps the run.
    const { own, client, toolStarted } = await waitingOnOwnRedis("restart", model, { leaseMs: 60_000, onWarning: (text) => warnings.push(text) });
    expect(await client.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    const finish = await toolStarted();
    await own.down();
    // The tool's result and the final reply are made while Redis is down.
    finish();
    await waitFor(() => client.hasEvent("agent_end"), "the run to end here", 20_000);
    await own.up();
    const reader = new Redis(own.url);
    const transcript = await pollUntil(async () => {
      const messages = await new RedisTranscriptStore(reader, "restart").load();
      return messages.length === 4 ? messages : undefined;
    }, "the transcript to hold the whole run");
    expect(transcript.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    const lastSeq = client.events().at(-1)?.seq ?? 0;
    const streamed = await pollUntil(async () => {
      const entries = await reader.xrange("rxagent:{restart}:events", "-", "+");
      return Number.parseInt(entries.at(-1)?.[0] ?? "0", 10) === lastSeq ? entries : undefined;
    }, "the stream to hold every frame the client saw");
    expect(streamed.map(([id]) => Number.parseInt(id, 10))).toStrictEqual(client.events().map((frame) => frame.seq));
    reader.disconnect();
    expect(warnings.filter((warning) => !/^Redis: .*; reconnecting\.$/.test(warning) && !/could not renew its lease/.test(warning))).toStrictEqual([]);
  }, 60_000);

  it("Redis down past the lease while the run ended here: the clients here get a snapshot, another process answers from what Redis holds, and stream and transcript agree", async () => {
    const own = await RedisServerProcess.start();
    const leaseMs = 300;
    const { wait, toolStarted } = waitTool();
    // Whatever process asks: a prompt gets the call, the call's result (or its interruption) the answer.
    const reply: ScriptedTurn = (context) => (context.messages.at(-1)?.role === "toolResult" ? "All done." : { content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] });
    const servers: AgentServer[] = [];
    for (let index = 0; index < 2; index++) {
      const sessions = redisSessions({ redis: own.url, leaseMs, onWarning: () => undefined, createAgent: (_id, store) => Agent.open({ store, tools: [wait], model: scriptedModel([reply, reply], { scheduler: asyncScheduler, delay: 5 }) }) });
      const server = await serveAgents({ port: 0, ...sessions.serveOptions });
      servers.push(server);
      closing.push(async () => {
        await server.close();
        await sessions.close();
      });
    }
    closing.push(() => own.stop());
    const onRunner = await attached(servers[0]!, "expired");
    const onOther = await attached(servers[1]!, "expired");
    expect(await onRunner.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    const finish = await toolStarted();
    await own.down();
    const downAt = Date.now();
    // The tool's result and the reply are made, and shown here, while Redis is down.
    finish();
    await waitFor(() => onRunner.hasEvent("agent_end"), "the run to end here", 20_000);
    // Redis stays down until the lease has surely expired (its last renewal was before `downAt`).
    await waitFor(() => Date.now() > downAt + leaseMs || undefined, "the lease's expiry", 5_000);
    await own.up();
    // Redis refuses the frames and the appends made after the lease expired: the clients here start again from a snapshot.
    await waitFor(() => onRunner.frames.filter((frame) => frame.type === "snapshot").length === 2, "a snapshot for the runner's client", 20_000);
    const reader = new Redis(own.url);
    const lastStored = await pollUntil(async () => {
      const [newest] = await reader.xrevrange("rxagent:{expired}:events", "+", "-", "COUNT", 1);
      return newest?.[1][1] === "agent_end" && (await reader.exists("rxagent:{expired}:lease")) === 0 ? Number.parseInt(newest[0], 10) : undefined;
    }, "the run to end on Redis");
    const transcript = await new RedisTranscriptStore(reader, "expired").load();
    const events = (await reader.xrange("rxagent:{expired}:events", "-", "+")).flatMap(([, fields]) => {
      const frame = JSON.parse(fields[3] as string) as { event?: { type: string; message?: unknown; reason?: string } };
      return frame.event === undefined ? [] : [frame.event];
    });
    const streamed = events.flatMap((event) => (event.type === "message_end" ? [event.message] : []));
    reader.disconnect();
    expect(transcript.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(streamed).toStrictEqual(transcript);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
    // A client shows what Redis holds, whether its last frames were events or a snapshot taken after the run
    // ended (the runner's client can be moved to a snapshot after the other process has finished the run).
    for (const watcher of [onRunner, onOther]) {
      const view = await waitFor(() => (watcher.view()?.seq === lastStored ? watcher.view() : undefined), "each client to show the run's end on Redis", 20_000);
      expect(view.state.isStreaming).toBe(false);
      expect(view.state.messages).toStrictEqual(transcript);
    }
  }, 60_000);

  it("Redis down past saveTimeoutMs: the run ends as failed saying the transcript could not be saved, and the session works again once Redis is back", async () => {
    // One model for every Agent of the session: the prompt after the failure gets the next turn.
    // The reply after the tool streams for about 2 s (40 words, 50 ms apart): the bound passes mid-run.
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] }, LONG_REPLY, "Back."], { scheduler: asyncScheduler, delay: 50 });
    const { own, client, toolStarted } = await waitingOnOwnRedis("bounded", model, { leaseMs: 60_000, saveTimeoutMs: 200, onWarning: () => undefined });
    expect(await client.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    const finish = await toolStarted();
    await own.down();
    finish();
    const end = await waitFor(() => client.agentEvents().find((event) => event.type === "agent_end"), "the run to end", 20_000);
    expect(end).toMatchObject({ reason: "failed", messages: [] });
    expect(end.type === "agent_end" && end.errorMessage).toMatch(/^The transcript could not be saved to Redis \(rxagent:\{bounded\}:transcript: an append waited more than 200 ms for Redis/);
    await own.up();
    expect(await client.request({ type: "prompt", input: "still there?" })).toStrictEqual({ type: "ack", id: "t3" });
    await waitFor(() => client.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the next run to end", 30_000);
  }, 60_000);

  it("close() while Redis is down finishes (ioredis would wait for a QUIT no one answers)", async () => {
    const lonely = await RedisServerProcess.start();
    const sessions = redisSessions({ redis: lonely.url, onWarning: () => undefined, createAgent: () => new Agent({ model: scriptedModel([]) }) });
    await sessions.hostSession("closing");
    await lonely.stop();
    // Commands sent now wait in ioredis's offline queue: close() must not wait for them.
    await sessions.close();
  }, 60_000);

  it("a stream that expired while the meta stayed: numbering goes on after its last frame, and a client from before gets a snapshot", async () => {
    const onA = await attached(await serve(), "expired");
    expect(await onA.request({ type: "prompt", input: "go" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => onA.hasEvent("agent_end"), "the run to end", 20_000);
    const lastSeen = onA.events().at(-1)?.seq ?? 0;
    const epoch = (onA.frames.find((frame) => frame.type === "snapshot") as { epoch: string }).epoch;
    const redis = new Redis(redisServer.url);
    // What eventTtlMs does to a session nobody used for a day: the frames go, the transcript and meta stay.
    await redis.del("rxagent:{expired}:events");
    redis.disconnect();

    const serverB = await serve();
    const onB = await attached(serverB, "expired");
    expect(await onB.request({ type: "prompt", input: "again" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => onB.hasEvent("agent_end"), "the second run to end", 20_000);
    assertContiguous(onB.events(), lastSeen);
    // A client that saw the first run comes back to B: it missed frames the stream no longer has.
    const returning = await RawClient.open(serverB.url);
    clients.push(returning);
    expect(await returning.request({ type: "attach", session: "expired", lastSeq: 3, epoch })).toMatchObject({ type: "ack", resume: "snapshot" });
  }, 30_000);
});
