import { Redis } from "ioredis";
import { asyncScheduler } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { redisSessions, type RedisTranscriptStore } from "../../src/redis/index.js";
import { serveAgents } from "../../src/server/index.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { assertContiguous, RawClient, waitFor } from "../server/helpers.js";
import { hasRedisServer, pollUntil, RedisServerProcess } from "./redis-server.js";
import { waitTool } from "./wait-tool.js";


/** Whatever process asks: a prompt gets the call, the call's result the answer. */
const reply: ScriptedTurn = (context) => (context.messages.at(-1)?.role === "toolResult" ? "All done." : { content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] });

describe.skipIf(!hasRedisServer)("a process watching a session through a Redis restart", () => {
  let redisServer: RedisServerProcess;
  let reader: Redis;

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
    reader = new Redis(redisServer.url);
    reader.on("error", () => undefined);
  }, 30_000);

  afterAll(async () => {
    reader?.disconnect();
    await redisServer?.stop();
  });

  // Suspected in the chaos test (seed 101, the in-process variant: a resume replay that never
  // reached the last stored frame). After a restart ioredis subscribes again by itself and says
  // nothing when Redis has done it; a watcher that reads the missed frames from the stream before
  // that misses every frame published between its read and the subscription. Here the watcher's
  // subscriptions after the restart are held until the run has ended, so its read comes first.
  it("its stream read waits for the channel's resubscription: frames published between the two reach its clients, and a resume there replays to the last stored frame", async () => {
    const { wait, started, finish } = waitTool();
    const createAgent = (_id: string, store: RedisTranscriptStore) => Agent.open({ store, tools: [wait], model: scriptedModel([reply, reply], { scheduler: asyncScheduler, delay: 5 }) });
    // The watcher's connection: its subscriber (made by `duplicate`) holds `subscribe` calls while `holding` is set.
    const watcherConnection = new Redis(redisServer.url);
    let holding: Promise<void> | undefined;
    let releaseHeld: () => void = () => undefined;
    let subscriber: Redis | undefined;
    let subscriberReadies = 0;
    let readsPending = 0;
    const duplicate = watcherConnection.duplicate.bind(watcherConnection);
    watcherConnection.duplicate = (...args) => {
      const made = duplicate(...args);
      const subscribe = made.subscribe.bind(made) as (...channels: string[]) => Promise<unknown>;
      made.subscribe = ((...channels: string[]) => (holding ? holding.then(() => subscribe(...channels)) : subscribe(...channels))) as typeof made.subscribe;
      // After redisSessions' own listener: by then its reaction to the reconnection has started.
      made.on("ready", () => subscriberReadies++);
      subscriber = made;
      return made;
    };
    type Read = (...args: string[]) => Promise<[string, string[]][]>;
    const xrange = watcherConnection.xrange.bind(watcherConnection) as unknown as Read;
    const countedRead: Read = (...args) => {
      readsPending++;
      return xrange(...args).finally(() => readsPending--);
    };
    watcherConnection.xrange = countedRead as unknown as typeof watcherConnection.xrange;
    // A lease that outlives the restart: the runner keeps the run.
    const runner = redisSessions({ redis: redisServer.url, leaseMs: 60_000, onWarning: () => undefined, createAgent });
    const watcher = redisSessions({ redis: watcherConnection, leaseMs: 60_000, onWarning: () => undefined, createAgent });
    const servers = [await serveAgents({ port: 0, ...runner.serveOptions }), await serveAgents({ port: 0, ...watcher.serveOptions })];
    const clients: RawClient[] = [];
    try {
      const [onRunner, onWatcher] = [await RawClient.open(servers[0]!.url), await RawClient.open(servers[1]!.url)];
      clients.push(onRunner, onWatcher);
      for (const client of clients) await client.request({ type: "attach", session: "gap" });
      expect(await onRunner.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
      await waitFor(() => onWatcher.hasEvent("tool_execution_start") && started(), "the watcher to see the tool start", 20_000);
      const epoch = (onWatcher.frames.find((frame) => frame.type === "snapshot") as { epoch: string }).epoch;
      const seenBefore = onWatcher.events().at(-1)?.seq ?? 0;

      holding = new Promise((resolve) => (releaseHeld = resolve));
      const readiesBefore = subscriberReadies;
      await redisServer.restart();
      // Both of the watcher's connections are back, and whatever it read from the stream on coming back has been read.
      await waitFor(() => subscriberReadies > readiesBefore && watcherConnection.status === "ready" && readsPending === 0, "the watcher to reconnect", 20_000);
      // The run ends while the watcher's subscriptions are held back.
      finish();
      const lastStored = await pollUntil(async () => {
        const [newest] = await reader.xrevrange("rxagent:{gap}:events", "+", "-", "COUNT", 1);
        return newest?.[1][1] === "agent_end" && (await reader.exists("rxagent:{gap}:lease")) === 0 ? Number.parseInt(newest[0], 10) : undefined;
      }, "the run to end on Redis");
      releaseHeld();
      holding = undefined;

      await waitFor(() => onWatcher.events().at(-1)?.seq === lastStored, "the watcher's client to show the run's end", 20_000);
      assertContiguous(onWatcher.events(), 0);
      expect(onWatcher.agentEvents().at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
      // A client that saw the tool start resumes on the watcher: the replay reaches the last stored frame.
      const resumed = await RawClient.open(servers[1]!.url);
      clients.push(resumed);
      expect(await resumed.request({ type: "attach", session: "gap", lastSeq: seenBefore, epoch })).toMatchObject({ type: "ack", resume: "replay" });
      await waitFor(() => resumed.events().at(-1)?.seq === lastStored, "the replay to reach the last stored frame", 20_000);
      assertContiguous(resumed.events(), seenBefore);
      expect(subscriber?.status).toBe("ready");
    } finally {
      releaseHeld();
      await Promise.all(clients.map((client) => client.close()));
      for (const server of servers) await server.close();
      await runner.close();
      await watcher.close();
    }
  }, 60_000);
});
