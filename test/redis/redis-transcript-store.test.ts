import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisTranscriptStore } from "../../src/redis/redis-transcript-store.js";
import { Agent } from "../../src/agent/agent.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/streams/transcript/repair-transcript.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentMessage, AssistantMessage } from "../../src/types.js";
import { withSessionScripts } from "../../src/redis/redis-scripts.js";
import { expectReopenedFromSummary } from "../helpers/compaction-session.js";
import { expectSettingsReopened } from "../helpers/stored-settings-session.js";
import { waitFor } from "../server/helpers.js";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

describe.skipIf(!hasRedisServer)("RedisTranscriptStore", () => {
  let server: RedisServerProcess;
  let redis: Redis;

  beforeAll(async () => {
    server = await RedisServerProcess.start();
    redis = new Redis(server.url, { lazyConnect: true });
    await redis.connect();
  }, 30_000);

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it("takes a frame resent after a reconnect (same seq) as stored: no error, no second entry, no second publish", async () => {
    // ioredis resends a command whose reply a reconnect lost; before, the resent XADD failed with
    // "The ID specified in XADD is equal or smaller than the target stream top item".
    const scripted = withSessionScripts(redis);
    const keys = ["rxagent:{resend}:lease", "rxagent:{resend}:events", "rxagent:{resend}:meta"] as const;
    await redis.set(keys[0], "token");
    const subscriber = new Redis(server.url);
    const published: string[] = [];
    try {
      await subscriber.subscribe("rxagent:{resend}:frames");
      subscriber.on("message", (_channel: string, message: string) => published.push(message));
      const append = () => scripted.rxagentAppendFrame(...keys, "token", 1, "agent_start", '{"seq":1}', 100, 60_000, "rxagent:{resend}:frames");
      expect(await append()).toBe(1);
      expect(await append()).toBe(1);
      expect(await redis.xlen(keys[1])).toBe(1);
      await waitFor(() => published.length === 1, "the first publish");
      await redis.ping();
      expect(published).toStrictEqual(['{"seq":1}']);
    } finally {
      subscriber.disconnect();
    }
  });

  it("appends in order, and another connection loads the same transcript", async () => {
    const store = new RedisTranscriptStore(redis, "order");
    const messages = [user("one"), user("two"), user("three")];
    for (const message of messages) store.append(message);
    await store.flush();
    const other = new Redis(server.url);
    try {
      expect(await new RedisTranscriptStore(other, "order").load()).toStrictEqual(messages);
    } finally {
      other.disconnect();
    }
  });

  it("keeps sessions apart and clear forgets only its own", async () => {
    const first = new RedisTranscriptStore(redis, "first");
    const second = new RedisTranscriptStore(redis, "second");
    first.append(user("a"));
    second.append(user("b"));
    first.clear();
    await Promise.all([first.flush(), second.flush()]);
    expect(await first.load()).toStrictEqual([]);
    expect(await second.load()).toStrictEqual([user("b")]);
  });

  it("stores a message with a BigInt in a safe form, with a warning, instead of losing it", async () => {
    const warnings: string[] = [];
    const store = new RedisTranscriptStore(redis, "bigint", { onWarning: (text) => warnings.push(text) });
    store.append({ role: "user", content: "n", timestamp: 1, details: 10n } as unknown as AgentMessage);
    await store.flush();
    expect(await store.load()).toStrictEqual([{ role: "user", content: "n", timestamp: 1, details: "10" }]);
    expect(warnings).toStrictEqual(["rxagent:{bigint}:transcript: a message held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form."]);
  });

  it("with a fence token, appends only while that token holds the session's lease", async () => {
    const warnings: string[] = [];
    const store = new RedisTranscriptStore(redis, "fenced", { fenceToken: "mine", onWarning: (text) => warnings.push(text) });
    await redis.set("rxagent:{fenced}:lease", "mine");
    store.append(user("while leased"));
    await store.flush();
    await redis.set("rxagent:{fenced}:lease", "another process");
    store.append(user("after the lease was lost"));
    await expect(store.flush()).rejects.toThrow("rxagent:{fenced}:transcript: could not append a message: this process no longer holds the session's lease");
    expect(await store.load()).toStrictEqual([user("while leased")]);
    expect(warnings).toStrictEqual(["rxagent:{fenced}:transcript: could not append a message: this process no longer holds the session's lease"]);
  });

  it("replaceState on an Agent rewrites the list in one script: Agent.open on another connection reopens on the new transcript", async () => {
    const written = new RedisTranscriptStore(redis, "replaced");
    const first = await Agent.open({ model: scriptedModel(["one", "two"]), store: written });
    await first.run("hello");
    first.replaceState({ messages: [user("compacted")] });
    await first.run("go on");
    await written.flush();
    const store = new RedisTranscriptStore(redis, "replaced");
    const other = new Redis(server.url);
    try {
      const reopened = await Agent.open({ model: scriptedModel([]), store: new RedisTranscriptStore(other, "replaced") });
      expect(reopened.messages.map((message) => (message.role === "user" ? message.content : message.role))).toStrictEqual(["compacted", "go on", "assistant"]);
      expect(reopened.messages).toStrictEqual(first.messages);
      expect(await store.load()).toStrictEqual(first.messages);
    } finally {
      other.disconnect();
    }
  });

  it("keeps the settings replaceState changed, fenced as appends are: Agent.open applies them, finds the model and tools by name, says which it was not given", async () => {
    await redis.set("rxagent:{settings}:lease", "mine");
    await expectSettingsReopened(
      () => new RedisTranscriptStore(redis, "settings", { fenceToken: "mine" }),
      (store) => (store as RedisTranscriptStore).flush(),
    );
  });

  it("with a fence token, replaces the transcript only while that token holds the lease, and appends go on after it", async () => {
    const warnings: string[] = [];
    const store = new RedisTranscriptStore(redis, "fenced-replace", { fenceToken: "mine", onWarning: (text) => warnings.push(text) });
    await redis.set("rxagent:{fenced-replace}:lease", "mine");
    await store.load();
    store.append(user("a"));
    store.append(user("b"));
    store.replace([user("only")]);
    store.append(user("after"));
    await store.flush();
    expect(await store.load()).toStrictEqual([user("only"), user("after")]);
    await redis.set("rxagent:{fenced-replace}:lease", "another process");
    store.replace([user("not mine")]);
    await expect(store.flush()).rejects.toThrow("rxagent:{fenced-replace}:transcript: could not replace the transcript: this process no longer holds the session's lease");
    expect(await new RedisTranscriptStore(redis, "fenced-replace").load()).toStrictEqual([user("only"), user("after")]);
    expect(warnings).toHaveLength(1);
  });

  it("skips an element that is not JSON, with a warning", async () => {
    await redis.rpush("rxagent:{torn}:transcript", JSON.stringify(user("kept")), "{not json");
    const warnings: string[] = [];
    expect(await new RedisTranscriptStore(redis, "torn", { onWarning: (text) => warnings.push(text) }).load()).toStrictEqual([user("kept")]);
    expect(warnings).toStrictEqual(["rxagent:{torn}:transcript[1]: skipped an element that is not valid JSON."]);
  });

  it("an append made before the connection is ready waits for it, and lands in order", async () => {
    const connecting = new Redis(server.url, { lazyConnect: true });
    const store = new RedisTranscriptStore(connecting, "offline");
    store.append(user("first"));
    store.append(user("second"));
    await store.flush();
    expect(await new RedisTranscriptStore(redis, "offline").load()).toStrictEqual([user("first"), user("second")]);
    connecting.disconnect();
  });

  it("an append that waits for Redis past saveTimeoutMs fails the store once; later appends throw and are not sent", async () => {
    // Port 1: nothing listens there, so the connection never becomes ready.
    const unreachable = new Redis("redis://127.0.0.1:1", { lazyConnect: true, maxRetriesPerRequest: null });
    unreachable.on("error", () => undefined);
    const failures: string[] = [];
    const warnings: string[] = [];
    const store = new RedisTranscriptStore(unreachable, "unreachable", { saveTimeoutMs: 100, onFailure: (error) => failures.push(error.message), onWarning: (text) => warnings.push(text) });
    store.append(user("waits"));
    await waitFor(() => failures.length > 0, "the store to fail");
    // The connection's status is the one when the bound passed: at load it may have moved on since.
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^rxagent:\{unreachable\}:transcript: an append waited more than 100 ms for Redis \((connecting|reconnecting)\); the transcript could not be saved\.$/);
    expect(warnings).toStrictEqual(failures);
    expect(() => store.append(user("after"))).toThrow(/could not append a message: an earlier write failed/);
    unreachable.disconnect();
  });

  it("appends waiting past maxPendingBytes fail the store at once", async () => {
    const unreachable = new Redis("redis://127.0.0.1:1", { lazyConnect: true, maxRetriesPerRequest: null });
    unreachable.on("error", () => undefined);
    const failures: string[] = [];
    const store = new RedisTranscriptStore(unreachable, "full", { maxPendingBytes: 100, onFailure: (error) => failures.push(error.message), onWarning: () => undefined });
    store.append(user("fits"));
    expect(() => store.append(user("x".repeat(100)))).toThrow("rxagent:{full}:transcript: could not append a message: more than 100 bytes of appends waited for Redis (connecting).");
    await waitFor(() => failures.length > 0, "onFailure");
    unreachable.disconnect();
  });

  // Called from a microtask, a throwing onFailure was an uncaught exception, which ends the process.
  it("an onFailure that throws is told to onWarning", async () => {
    const unreachable = new Redis("redis://127.0.0.1:1", { lazyConnect: true, maxRetriesPerRequest: null });
    unreachable.on("error", () => undefined);
    const warnings: string[] = [];
    const onFailure = (): void => {
      throw new Error("the listener broke");
    };
    const store = new RedisTranscriptStore(unreachable, "full", { maxPendingBytes: 100, onFailure, onWarning: (text) => warnings.push(text) });
    store.append(user("fits"));
    expect(() => store.append(user("x".repeat(100)))).toThrow(/more than 100 bytes of appends waited/);
    await waitFor(() => warnings.length === 2, "the failure and onFailure's to be told");
    expect(warnings[1]).toBe("onFailure failed: the listener broke");
    unreachable.disconnect();
  });

  it("a fenced append is stored once when ioredis sends it again, and one after a lost append marks the session broken", async () => {
    await redis.set("rxagent:{once}:lease", "mine");
    const store = new RedisTranscriptStore(redis, "once", { fenceToken: "mine" });
    expect(await store.load()).toStrictEqual([]);
    store.append(user("one"));
    await store.flush();
    const scripted = withSessionScripts(redis);
    // The same append again (index 0), as after a reconnect: the list keeps one copy.
    expect(await scripted.rxagentFencedPush("rxagent:{once}:lease", "rxagent:{once}:transcript", "rxagent:{once}:meta", "rxagent:{once}:queue", "mine", JSON.stringify(user("one")), 0, "", 0, 0, "rxagent:{once}:frames")).toBe(1);
    // An append whose predecessor (index 1) never arrived.
    expect(await scripted.rxagentFencedPush("rxagent:{once}:lease", "rxagent:{once}:transcript", "rxagent:{once}:meta", "rxagent:{once}:queue", "mine", JSON.stringify(user("three")), 2, "", 0, 0, "rxagent:{once}:frames")).toBe(-1);
    expect(await store.load()).toStrictEqual([user("one")]);
    expect(await redis.hget("rxagent:{once}:meta", "broken")).toBe("1");
  });

  it("a queued message leaves the session's queue with its append, exactly once also when ioredis sends both again after a reconnect", async () => {
    await redis.set("rxagent:{requeue}:lease", "mine");
    const scripted = withSessionScripts(redis);
    const keys = ["rxagent:{requeue}:lease", "rxagent:{requeue}:transcript", "rxagent:{requeue}:meta", "rxagent:{requeue}:queue"] as const;
    const element = JSON.stringify({ id: "q1", kind: "steer", message: user("steered") });
    const frames = "rxagent:{requeue}:frames";
    // The counts each script is given are the runner's after it: one steer queued, then none.
    const queue = () => scripted.rxagentQueueMessage(keys[0], keys[3], keys[2], "mine", element, 1, 0, frames);
    const append = () => scripted.rxagentFencedPush(...keys, "mine", JSON.stringify(user("steered")), 0, element, 0, 0, frames);
    const counts = () => redis.hmget(keys[2], "queuedSteering", "queuedFollowUp");
    expect(await queue()).toBe(1);
    // Sent again (its reply lost): one copy.
    expect(await queue()).toBe(1);
    expect(await counts()).toStrictEqual(["1", "0"]);
    expect(await append()).toBe(1);
    expect(await redis.llen(keys[3])).toBe(0);
    expect(await counts()).toStrictEqual(["0", "0"]);
    // Both sent again, in their order, as ioredis resends what a reconnect left unanswered: the
    // append's resend removes the copy the enqueue's resend put back, and stores nothing twice.
    expect(await queue()).toBe(1);
    expect(await append()).toBe(1);
    expect(await redis.llen(keys[3])).toBe(0);
    expect(await counts()).toStrictEqual(["0", "0"]);
    expect(await redis.lrange(keys[1], 0, -1)).toStrictEqual([JSON.stringify(user("steered"))]);
    // Fenced: a token that lost the lease queues nothing.
    expect(await scripted.rxagentQueueMessage(keys[0], keys[3], keys[2], "theirs", element, 1, 0, frames)).toBe(0);
    expect(await redis.llen(keys[3])).toBe(0);
  });

  it("an Agent opened on the store repairs a transcript whose run died during a tool call, and goes on", async () => {
    const call: AssistantMessage = {
      role: "assistant",
      content: [{ type: "toolCall", id: "call-1", name: "clock", arguments: {} }],
      api: "scripted",
      provider: "scripted",
      model: "scripted",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "toolUse",
      timestamp: 2,
    };
    const store = new RedisTranscriptStore(redis, "repair");
    store.append(user("what time is it?"));
    store.append(call);
    await store.flush();
    const agent = await Agent.open({ store, model: scriptedModel(["I could not read the clock."]) });
    await new Promise<void>((resolve, reject) => agent.continue().subscribe({ complete: resolve, error: reject }));
    await store.flush();
    const stored = await store.load();
    expect(stored.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(stored[2]).toMatchObject({ role: "toolResult", toolCallId: "call-1", isError: true, content: [{ type: "text", text: INTERRUPTED_TOOL_TEXT }] });
  });

  it("keeps compaction's summaries in the list, and a session reopened from Redis continues from the last", async () => {
    const store = new RedisTranscriptStore(redis, "compacted");
    await expectReopenedFromSummary(store, () => store.flush(), () => new RedisTranscriptStore(redis, "compacted"));
  });
});
