import { Redis } from "ioredis";
import { asyncScheduler } from "rxjs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { RedisTranscriptStore, TAKEOVER_TEXT, takeoverLimitText } from "../../src/redis/index.js";
import type { AgentServer } from "../../src/server/index.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/streams/transcript/repair-transcript.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { ToolResultMessage } from "../../src/types.js";
import { approvalTools } from "../server/approval-restart-tools.js";
import { RawClient, waitFor } from "../server/helpers.js";
import { attachedClient, type Closing, servedSessions } from "./served-sessions.js";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";
import { kill, type SessionProcess, startProcess as startChild } from "./session-process.js";

const LEASE_MS = 1000;

const startProcess = (redisUrl: string, mode: "normal" | "hang" | "crash") => startChild(redisUrl, mode, LEASE_MS);

describe.skipIf(!hasRedisServer)("approvals on Redis survive the runner's death", () => {
  let redisServer: RedisServerProcess;
  let redis: Redis;
  const closing: Closing = [];

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
    redis = new Redis(redisServer.url);
  }, 30_000);

  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  afterAll(async () => {
    redis?.disconnect();
    await redisServer?.stop();
  });

  /** Process B, in this test process: its deploy and read calls go to `ran`. */
  async function serveHere(ran: string[], maxTakeovers?: number): Promise<AgentServer> {
    return servedSessions({
      redis: redisServer.url,
      leaseMs: LEASE_MS,
      ...(maxTakeovers === undefined ? {} : { maxTakeovers }),
      createAgent: (_id, store) => Agent.open({ store, tools: approvalTools(ran), model: scriptedModel(["Deployed to prod."], { scheduler: asyncScheduler, delay: 5 }) }),
    }, closing);
  }

  const attach = (url: string, session: string): Promise<RawClient> => attachedClient(url, session, closing);

  /** A prompts on `session`, its deploy call waits for approval and its read call has finished, as B's client sees. */
  async function waitingOnA(session: string, mode: "normal" | "hang"): Promise<{ processA: SessionProcess; onB: RawClient; ran: string[] }> {
    const processA = await startProcess(redisServer.url, mode);
    closing.push(() => kill(processA));
    const ran: string[] = [];
    const onA = await attach(processA.url, session);
    const onB = await attach((await serveHere(ran)).url, session);
    expect(await onA.request({ type: "prompt", input: "Ship it" })).toMatchObject({ type: "ack" });
    await waitFor(() => onB.agentEvents().some((event) => event.type === "tool_execution_end" && event.toolCallId === "r1"), "B to see the read call end while deploy waits", 20_000);
    expect(onB.agentEvents().filter((event) => event.type === "tool_approval_start").map((event) => event.type === "tool_approval_start" && event.toolCallId)).toStrictEqual(["d1"]);
    return { processA, onB, ran };
  }

  /** The session's transcript on Redis once it holds `count` messages: the events the test waits for are B's own, and its last append reaches Redis just after them. */
  async function transcriptOf(session: string, count: number) {
    const store = new RedisTranscriptStore(redis, session);
    let messages = await store.load();
    for (const deadline = Date.now() + 20_000; messages.length < count && Date.now() < deadline; messages = await store.load()) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return messages;
  }

  it("the runner SIGKILLed while a call waits: B reopens it waiting, approve through B runs it once, the run ends", async () => {
    const { processA, onB, ran } = await waitingOnA("approval-wait", "normal");
    await kill(processA);
    // B takes the run over: the dead run ends, the reopened one waits for the same call again.
    await waitFor(() => onB.agentEvents().filter((event) => event.type === "tool_approval_start").length === 2, "B to reopen the waiting call", 20_000);
    expect(onB.agentEvents().find((event) => event.type === "agent_end")).toStrictEqual({ type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT });
    const fresh = await attach(onB.socket.url.replace(/\/?$/, ""), "approval-wait");
    const snapshot = fresh.frames.find((frame) => frame.type === "snapshot");
    expect(snapshot?.type === "snapshot" && snapshot.state.pendingApprovals.map((approval) => approval.toolCallId)).toStrictEqual(["d1"]);

    expect(await onB.request({ type: "approve", toolCallId: "d1" })).toMatchObject({ type: "ack" });
    await waitFor(() => onB.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the reopened run to end", 20_000);
    expect(onB.agentEvents().filter((event) => event.type === "agent_end").at(-1)).toMatchObject({ reason: "idle" });
    // Deploy ran once, on B; the read ran once, on A, and its result was kept.
    expect(ran).toStrictEqual(["d1"]);
    expect(processA.stdout().match(/RAN \w+/g)).toStrictEqual(["RAN r1"]);
    const messages = await transcriptOf("approval-wait", 5);
    expect(messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
    expect((messages.slice(2, 4) as ToolResultMessage[]).map((result) => [result.toolCallId, result.isError, result.content])).toStrictEqual([
      ["d1", false, [{ type: "text", text: "deployed to prod" }]],
      ["r1", false, [{ type: "text", text: "read it" }]],
    ]);
  }, 120_000);

  it("the runner SIGKILLed inside the approved tool: B does not run it again, the call ends interrupted, the run goes on", async () => {
    const { processA, onB, ran } = await waitingOnA("approval-inside", "hang");
    // Approved through B: the command goes to A, which runs the session.
    expect(await onB.request({ type: "approve", toolCallId: "d1" })).toMatchObject({ type: "ack" });
    await waitFor(() => processA.stdout().includes("DEPLOYING"), "A to be inside the deploy", 20_000);
    await kill(processA);
    await waitFor(() => onB.agentEvents().filter((event) => event.type === "agent_end").length === 2, "B to take over and end the run", 20_000);
    expect(ran).toStrictEqual([]);
    const messages = await transcriptOf("approval-inside", 5);
    expect(messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
    expect((messages.slice(2, 4) as ToolResultMessage[]).map((result) => [result.toolCallId, result.isError, result.content])).toStrictEqual([
      ["d1", true, [{ type: "text", text: INTERRUPTED_TOOL_TEXT }]],
      ["r1", false, [{ type: "text", text: "read it" }]],
    ]);
  }, 120_000);

  it("a run that crashes every process taking it over ends as failed after maxTakeovers, and the session is usable again", async () => {
    // Three processes die as soon as the model is called: A on the prompt, B and C each on its takeover.
    const crashing = await Promise.all([0, 1, 2].map(() => startProcess(redisServer.url, "crash")));
    for (const process of crashing) closing.push(() => kill(process));
    const [onA] = await Promise.all(crashing.map((process) => attach(process.url, "crashes")));
    expect(await onA!.request({ type: "prompt", input: "Crash me" })).toMatchObject({ type: "ack" });
    await Promise.all(crashing.map((process) => process.exited));
    expect(await redis.hget("rxagent:{crashes}:meta", "takeovers")).toBe("2");

    // This process finds the run orphaned a third time: past maxTakeovers 2, it ends it instead of asking the model again.
    const ran: string[] = [];
    const here = await attach((await serveHere(ran, 2)).url, "crashes");
    await waitFor(() => here.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the run to end as failed", 20_000);
    expect(here.agentEvents().filter((event) => event.type === "agent_end")).toStrictEqual([
      { type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT },
      { type: "agent_end", messages: [], reason: "failed", errorMessage: takeoverLimitText(2) },
    ]);
    expect(await new RedisTranscriptStore(redis, "crashes").load()).toMatchObject([{ role: "user", content: "Crash me" }]);
    expect(await redis.hget("rxagent:{crashes}:meta", "takeovers")).toBe(null);
    // The session is idle, and a new prompt runs (on this process's model, which does not crash).
    expect(await here.request({ type: "prompt", input: "Again" })).toMatchObject({ type: "ack" });
    await waitFor(() => here.agentEvents().filter((event) => event.type === "agent_end").length === 3, "the next run to end", 20_000);
    expect(here.agentEvents().filter((event) => event.type === "agent_end").at(-1)).toMatchObject({ reason: "idle" });
  }, 120_000);
});
