import { Type } from "@sinclair/typebox";
import { Redis } from "ioredis";
import { asyncScheduler, lastValueFrom } from "rxjs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { withSessionScripts } from "../../src/redis/redis-scripts.js";
import { sessionKeys } from "../../src/redis/session-keys.js";
import { SessionQueue } from "../../src/redis/session-queue.js";
import { RedisTranscriptStore, TAKEOVER_TEXT } from "../../src/redis/index.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/streams/transcript/repair-transcript.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { AgentMessage } from "../../src/types.js";
import { RawClient, waitFor } from "../server/helpers.js";
import { attachedClient, type Closing, servedSessions } from "./served-sessions.js";
import { hasRedisServer, pollUntil, RedisServerProcess } from "./redis-server.js";
import { kill, startProcess } from "./session-process.js";
import { stallEventLoop } from "../helpers/stall-event-loop.js";

const LEASE_MS = 1000;
/**
 * For the tests in which no lease may run out (every test but the takeovers): much longer than
 * any pause a loaded machine makes.
 */
const LONG_LEASE_MS = 30_000;

/** A prompt "go" gets a call of `wait`, every other model call a short answer. */
const callOnGo: Extract<ScriptedTurn, (...args: never[]) => unknown> = (context) => {
  const last = context.messages.at(-1);
  return last?.role === "user" && last.content === "go" ? { content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] } : "Noted.";
};

/** A tool that runs until its signal fires (its process lost the session) or the process dies. */
const waitForever = defineTool({
  name: "wait",
  description: "Waits",
  parameters: Type.Object({}),
  execute: (_id, _input, { signal }) => new Promise<never>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error))),
});

/** A message as the transcript tests read it: role and text. */
function line(message: AgentMessage): string {
  if (!("content" in message)) return message.role;
  const text = typeof message.content === "string" ? message.content : message.content.map((part) => ("text" in part ? part.text : part.type)).join(" ");
  return `${message.role}:${text}`;
}

/**
 * Issue 28: an acked steer or follow-up lived only in the runner's Agent queue, and was lost when
 * the runner died (or lost its lease) before its run took it. Now it is kept on Redis (the
 * session's `queue` list) from its ack until the run's transcript append of it.
 */
describe.skipIf(!hasRedisServer)("steers and follow-ups on Redis survive the runner", () => {
  let redisServer: RedisServerProcess;
  let reader: Redis;
  const closing: Closing = [];

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
    reader = new Redis(redisServer.url);
  }, 30_000);

  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
    warnings.length = 0;
  });

  afterAll(async () => {
    reader?.disconnect();
    await redisServer?.stop();
  });

  /** With `steeringInterruptsTools`, each answer after the first call streams slowly (500 ms a chunk): the run is still going when the test looks at Redis. */
  /** What the in-process servers warned about, in order. */
  const warnings: string[] = [];

  async function serveHere(redis: string | Redis = redisServer.url, steeringInterruptsTools = false, leaseMs = LEASE_MS) {
    const slowly: ScriptedTurn = (context, call) => (call === 0 ? callOnGo(context, call) : { content: [{ type: "text", text: "Noted." }], delay: 500 });
    const turn = steeringInterruptsTools ? slowly : callOnGo;
    const model = () => scriptedModel([turn, turn, turn, turn], { scheduler: asyncScheduler, delay: 5 });
    return servedSessions({ redis, leaseMs, onWarning: (text) => warnings.push(text), createAgent: (_id, store) => Agent.open({ store, tools: [waitForever], model: model(), steeringInterruptsTools }) }, closing);
  }

  const attach = (url: string, session: string): Promise<RawClient> => attachedClient(url, session, closing);

  /** The session once its run ended on Redis (no lease): its transcript, the messages of its `message_end` frames, and its queue. */
  async function storedSession(session: string) {
    await pollUntil(async () => ((await reader.exists(`rxagent:{${session}}:lease`)) === 0 ? true : undefined), "the lease to go back");
    const transcript = await new RedisTranscriptStore(reader, session).load();
    const streamed = (await reader.xrange(`rxagent:{${session}}:events`, "-", "+")).flatMap(([, fields]) => {
      const frame = JSON.parse(fields[3] as string) as { event?: { type: string; message?: AgentMessage } };
      return frame.event?.type === "message_end" && frame.event.message ? [frame.event.message] : [];
    });
    return { transcript, streamed, queue: await reader.lrange(`rxagent:{${session}}:queue`, 0, -1) };
  }

  for (const type of ["steer", "follow_up"] as const) {
    it(`a ${type} acked while a tool runs, its runner SIGKILLed before the run took it: the takeover's run holds it once, frames and transcript agree`, async () => {
      const session = `killed-${type}`;
      const processA = await startProcess(redisServer.url, "wait", LEASE_MS);
      closing.push(() => kill(processA));
      const onA = await attach(processA.url, session);
      const onB = await attach((await serveHere()).url, session);
      expect(await onA.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
      await waitFor(() => processA.stdout().includes("WAITING"), "A's tool to run", 20_000);
      // Sent through B: forwarded to A, which runs the session.
      expect(await onB.request({ type, input: `and ${type}` })).toMatchObject({ type: "ack" });
      await kill(processA);
      await waitFor(() => onB.agentEvents().filter((event) => event.type === "agent_end").length === 2, "B to take the run over and end it", 20_000);
      expect(onB.agentEvents().filter((event) => event.type === "agent_end")).toStrictEqual([
        { type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT },
        expect.objectContaining({ type: "agent_end", reason: "idle" }),
      ]);
      const { transcript, streamed, queue } = await storedSession(session);
      // Before the fix the message was gone: A's queue died with A.
      const interrupted = `toolResult:${INTERRUPTED_TOOL_TEXT}`;
      expect(transcript.map(line)).toStrictEqual(
        type === "steer"
          ? ["user:go", "assistant:toolCall", interrupted, "user:and steer", "assistant:Noted."]
          : ["user:go", "assistant:toolCall", interrupted, "assistant:Noted.", "user:and follow_up", "assistant:Noted."],
      );
      expect(streamed).toStrictEqual(transcript);
      expect(queue).toStrictEqual([]);
    }, 120_000);
  }

  it("a lease lost right after Redis stored a steer, before the run took it: the steer is acked, and the takeover's run holds it once", async () => {
    const connection = withSessionScripts(new Redis(redisServer.url));
    const queueMessage = connection.rxagentQueueMessage.bind(connection);
    let cut = false;
    // Deleted on the runner's own connection, so right after the steer's queue write.
    connection.rxagentQueueMessage = (lease, ...rest) => {
      const stored = queueMessage(lease, ...rest);
      if (!cut) {
        cut = true;
        void connection.del(lease);
      }
      return stored;
    };
    const client = await attach((await serveHere(connection)).url, "cut-steer");
    expect(await client.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.agentEvents().some((event) => event.type === "tool_execution_start"), "the tool to run", 20_000);
    // Before the fix: session_moved (the lease check after the steer failed), and the steer was dropped.
    expect(await client.request({ type: "steer", input: "and this" })).toMatchObject({ type: "ack" });
    expect(cut).toBe(true);
    await waitFor(() => client.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the takeover to end the dead run and finish it", 20_000);
    const { transcript, streamed, queue } = await storedSession("cut-steer");
    expect(transcript.map(line)).toStrictEqual(["user:go", "assistant:toolCall", `toolResult:${INTERRUPTED_TOOL_TEXT}`, "user:and this", "assistant:Noted."]);
    expect(streamed).toStrictEqual(transcript);
    expect(queue).toStrictEqual([]);
  }, 60_000);

  it("a steer the run takes before the runner hears of it (it interrupts the tools and ends the turn at once): acked, in the transcript once, and not left in the queue", async () => {
    const client = await attach((await serveHere(redisServer.url, true, LONG_LEASE_MS)).url, "interrupting");
    expect(await client.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.agentEvents().some((event) => event.type === "tool_execution_start"), "the tool to run", 20_000);
    expect(await client.request({ type: "steer", input: "stop that" })).toMatchObject({ type: "ack" });
    // The run took it, and it is not queued: a takeover from here on must not deliver it again.
    // Without the guard, the queue write went out after the append had taken it, and a copy stayed
    // until the run's end (a runner dying before that left it for the takeover to deliver twice).
    expect(await reader.lrange("rxagent:{interrupting}:queue", 0, -1)).toStrictEqual([]);
    await waitFor(() => client.agentEvents().some((event) => event.type === "agent_end"), "the run to end", 20_000);
    const { transcript, streamed, queue } = await storedSession("interrupting");
    expect(transcript.map(line)).toStrictEqual(["user:go", "assistant:toolCall", expect.stringMatching(/^toolResult:/), "user:stop that", "assistant:Noted."]);
    expect(streamed).toStrictEqual(transcript);
    expect(queue).toStrictEqual([]);
  }, 60_000);

  it("an abort drops the queued steer on Redis as on the agent; the queued follow-up stays, and runs after the next prompt, on another process", async () => {
    // No lease runs out here, even on a busy machine. With the 1 s lease, the stall below made the
    // session move and the abort get an error frame instead of its ack (3 runs of 3), and CI on
    // Node 24 once found the follow-up gone from the queue after the abort.
    const first = await attach((await serveHere(redisServer.url, false, LONG_LEASE_MS)).url, "aborted");
    const second = await attach((await serveHere(redisServer.url, false, LONG_LEASE_MS)).url, "aborted");
    expect(await first.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
    await waitFor(() => first.agentEvents().some((event) => event.type === "tool_execution_start"), "the tool to run", 20_000);
    expect(await first.request({ type: "steer", input: "steered" })).toMatchObject({ type: "ack" });
    expect(await first.request({ type: "follow_up", input: "later" })).toMatchObject({ type: "ack" });
    expect((await reader.lrange("rxagent:{aborted}:queue", 0, -1)).map((element) => (JSON.parse(element) as { kind: string }).kind)).toStrictEqual(["steer", "follow_up"]);
    stallEventLoop(1500);
    expect(await first.request({ type: "abort" })).toMatchObject({ type: "ack" });
    const afterAbort = await storedSession("aborted");
    expect(afterAbort.queue.map((element) => JSON.parse(element) as { kind: string; message: AgentMessage }).map(({ kind, message }) => `${kind} ${line(message)}`)).toStrictEqual(["follow_up user:later"]);
    // Before the fix the follow-up died with the first process's agent.
    expect(await second.request({ type: "prompt", input: "next" })).toMatchObject({ type: "ack" });
    await waitFor(() => second.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the next run to end", 20_000);
    const { transcript, streamed, queue } = await storedSession("aborted");
    expect(transcript.map(line).slice(3)).toStrictEqual(["user:next", "assistant:Noted.", "user:later", "assistant:Noted."]);
    expect(streamed).toStrictEqual(transcript);
    expect(queue).toStrictEqual([]);
  }, 60_000);

  it("a reset forgets the queued messages on Redis too", async () => {
    const client = await attach((await serveHere(redisServer.url, false, LONG_LEASE_MS)).url, "reset-queue");
    expect(await client.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.agentEvents().some((event) => event.type === "tool_execution_start"), "the tool to run", 20_000);
    expect(await client.request({ type: "follow_up", input: "later" })).toMatchObject({ type: "ack" });
    expect(await reader.llen("rxagent:{reset-queue}:queue")).toBe(1);
    expect(await client.request({ type: "reset" })).toMatchObject({ type: "ack" });
    await pollUntil(async () => ((await reader.llen("rxagent:{reset-queue}:queue")) === 0 ? true : undefined), "the queue to go");
  }, 60_000);
  /** The queue counts a client attached now is shown (its snapshot's state). */
  async function shownQueued(url: string, session: string): Promise<[number, number]> {
    const client = await attach(url, session);
    await waitFor(() => client.frames.some((frame) => frame.type === "snapshot"), "the snapshot");
    const snapshot = client.frames.find((frame) => frame.type === "snapshot") as { state: { queuedSteering: number; queuedFollowUp: number } };
    return [snapshot.state.queuedSteering, snapshot.state.queuedFollowUp];
  }

  /** Polls `shownQueued` until it shows `expected` (the counts travel through the frames channel). */
  async function waitShown(url: string, session: string, expected: [number, number]): Promise<void> {
    await pollUntil(async () => {
      const shown = await shownQueued(url, session);
      return shown[0] === expected[0] && shown[1] === expected[1] ? true : undefined;
    }, `a snapshot showing ${expected.join(" / ")} queued`);
  }

  it("a steer sent while a tool runs is shown queued to clients on every process, the runner's and another's, and gone once the run took it", async () => {
    const runnerServer = await serveHere(redisServer.url, false, LONG_LEASE_MS);
    const otherServer = await serveHere(redisServer.url, false, LONG_LEASE_MS);
    const first = await attach(runnerServer.url, "shown");
    const second = await attach(otherServer.url, "shown");
    expect(await first.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
    await waitFor(() => first.agentEvents().some((event) => event.type === "tool_execution_start"), "the tool to run", 20_000);
    expect(await second.request({ type: "steer", input: "and this" })).toMatchObject({ type: "ack" });
    expect(await second.request({ type: "follow_up", input: "later" })).toMatchObject({ type: "ack" });
    // Before: every snapshot showed 0 / 0 (the mirrors rebuild the state from events, and no event tells a queue change).
    await waitShown(otherServer.url, "shown", [1, 1]);
    await waitShown(runnerServer.url, "shown", [1, 1]);
    // The tool ends: the run takes the steer into its next turn, then the follow-up once it would stop.
    expect(await second.request({ type: "cancel_tool", toolCallId: "w1" })).toMatchObject({ type: "ack" });
    await waitFor(() => second.agentEvents().some((event) => event.type === "agent_end"), "the run to end", 20_000);
    const { transcript, queue } = await storedSession("shown");
    expect(transcript.map(line).slice(3)).toStrictEqual(["user:and this", "assistant:Noted.", "user:later", "assistant:Noted."]);
    expect(queue).toStrictEqual([]);
    await waitShown(otherServer.url, "shown", [0, 0]);
    await waitShown(runnerServer.url, "shown", [0, 0]);
  }, 60_000);

  it("a kept element that is not a queued message, or whose message the agent refuses, is removed from the queue with a warning when a process takes the session", async () => {
    const queueKey = "rxagent:{bad-queue}:queue";
    const refused = JSON.stringify({ id: "r", kind: "follow_up", message: { role: "user", content: "no timestamp" } });
    const kept = [1, 2].map((index) => JSON.stringify({ id: `f${index}`, kind: "follow_up", message: { role: "user", content: `kept ${index}`, timestamp: index } }));
    await reader.rpush(queueKey, "not json", JSON.stringify({ id: "x", kind: "steer", message: { text: "no role" } }), refused, ...kept);
    const client = await attach((await serveHere(redisServer.url, false, LONG_LEASE_MS)).url, "bad-queue");
    expect(await client.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.agentEvents().some((event) => event.type === "tool_execution_start"), "the tool to run", 20_000);
    // Before: skipped with a warning and left there (the refused one even stayed past the run's
    // end, other follow-ups being queued), to be skipped again by every later run.
    expect(await reader.lrange(queueKey, 0, -1)).toStrictEqual(kept);
    expect(warnings.filter((text) => text.includes(queueKey))).toStrictEqual([
      `${queueKey}[0]: removed an element that is not a queued message.`,
      `${queueKey}[1]: removed an element that is not a queued message.`,
      expect.stringMatching(/^rxagent:\{bad-queue\}:queue\[2\]: removed a kept follow_up the agent refused: .*no timestamp number/),
    ]);
    // An abort keeps the follow-ups, on the agent and on Redis.
    expect(await client.request({ type: "abort" })).toMatchObject({ type: "ack" });
    expect((await storedSession("bad-queue")).queue).toStrictEqual(kept);
  }, 60_000);

  it("a message `continue` took that its run never appended, while another of its kind still waits: dropped from the queue at the run's end, as the agent dropped it", async () => {
    await reader.set("rxagent:{took}:lease", "mine");
    const connection = withSessionScripts(new Redis(redisServer.url));
    closing.push(async () => void connection.disconnect());
    const queue = new SessionQueue(connection, sessionKeys("rxagent:", "took"), "mine");
    const agent = new Agent({ model: scriptedModel(["Noted."], { scheduler: asyncScheduler, delay: 5 }) });
    await lastValueFrom(agent.prompt("hi"));
    // With an image the first nests three levels (message, content, part); the second one.
    const first: AgentMessage = { role: "user", content: [{ type: "text", text: "first" }, { type: "image", data: "aGk=", mimeType: "image/png" }], timestamp: 1 };
    const second: AgentMessage = { role: "user", content: "second", timestamp: 2 };
    for (const message of [first, second]) {
      agent.followUp(message);
      expect(await queue.add("follow_up", message)).toBe(true);
    }
    const [firstElement] = await reader.lrange("rxagent:{took}:queue", 0, -1);
    // `continue` takes the first follow-up, then refuses it (the config changed since it was queued): the agent lost it.
    agent.configure({ maxJsonDepth: 2 });
    expect(() => agent.continue()).toThrow(/nest deeper than 2/);
    expect(agent.snapshot().queued.followUp).toStrictEqual([second]);
    // Before: kept (a follow-up was still queued, and `continue` does not mark what it takes), for the next run to deliver.
    expect(queue.dropped(agent.snapshot().queued)).toStrictEqual([firstElement]);
    expect(queue.counts).toStrictEqual([0, 1]);
  });
});
