import { Redis } from "ioredis";
import { asyncScheduler } from "rxjs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { withSessionScripts } from "../../src/redis/redis-scripts.js";
import { RedisTranscriptStore, TAKEOVER_TEXT } from "../../src/redis/index.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import type { AgentTool } from "../../src/types.js";
import { approvalTools } from "../server/approval-restart-tools.js";
import { RawClient, waitFor } from "../server/helpers.js";
import { attachedClient, type Closing, servedSessions } from "./served-sessions.js";
import { hasRedisServer, pollUntil, RedisServerProcess } from "./redis-server.js";
import { waitTool } from "./wait-tool.js";

/** The lease of these tests, and the periods the session's timers run at for it. */
const LEASE_MS = 1200;
const RENEW_MS = Math.floor(LEASE_MS / 3);

/** Whatever process asks: a prompt gets a call of `tool`, the call's result (or its interruption) the answer. */
function callThenAnswer(tool: string): ScriptedTurn {
  return (context) => (context.messages.at(-1)?.role === "toolResult" ? "Done." : { content: [{ type: "toolCall", id: "c1", name: tool, arguments: tool === "deploy" ? { target: "prod" } : {} }] });
}

/**
 * Issue 28, found with stalls in the chaos test: a process that stalled past its lease between
 * taking it for a command and the command's first write to Redis answered the command `ack`, then
 * Redis refused everything of it, and no process ever acted on it. Each test here loses the lease
 * at that point (deleted by the test, as it expires after a stall with no other taker) and checks
 * that the sender hears so (`session_moved`) instead of an ack for a command that is gone.
 */
describe.skipIf(!hasRedisServer)("commands are acked only once Redis stored them", () => {
  let redisServer: RedisServerProcess;
  let reader: Redis;
  const closing: Closing = [];

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
    reader = new Redis(redisServer.url);
  }, 30_000);

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const close of closing.splice(0)) await close();
  });

  afterAll(async () => {
    reader?.disconnect();
    await redisServer?.stop();
  });

  async function serve(redis: string | Redis, tools: AgentTool[], turn: ScriptedTurn, warnings: string[] = []) {
    return servedSessions({ redis, leaseMs: LEASE_MS, onWarning: (text) => warnings.push(text), createAgent: (_id, store) => Agent.open({ store, tools, model: scriptedModel([turn, turn], { scheduler: asyncScheduler, delay: 5 }) }) }, closing);
  }

  const attached = (url: string, session: string): Promise<RawClient> => attachedClient(url, session, closing);

  /** The runner made from now on does not renew its lease (its timer is a no-op): the test decides when the lease goes. */
  function withoutRenewals(): void {
    const realSetInterval = globalThis.setInterval;
    vi.spyOn(globalThis, "setInterval").mockImplementation(((handler: () => void, ms?: number) => realSetInterval(ms === RENEW_MS ? () => undefined : handler, ms)) as unknown as typeof setInterval);
  }

  async function transcriptRoles(session: string): Promise<string[]> {
    return (await new RedisTranscriptStore(reader, session).load()).map((message) => `${message.role}:${"content" in message && typeof message.content === "string" ? message.content : ""}`);
  }

  it("a lease lost between taking it for a prompt and the prompt's first write: the sender gets session_moved, not an ack; Redis holds nothing of it, and the next prompt runs", async () => {
    const connection = withSessionScripts(new Redis(redisServer.url));
    type Call = (...args: unknown[]) => Promise<unknown>;
    const set = connection.set.bind(connection) as unknown as Call;
    let stalled = false;
    // Right after this process took the lease, it expires, as after a stall past it.
    connection.set = (async (...args: unknown[]) => {
      const result = await set(...args);
      if (!stalled && args.includes("NX") && result === "OK") {
        stalled = true;
        await reader.del(args[0] as string);
      }
      return result;
    }) as unknown as typeof connection.set;
    const warnings: string[] = [];
    const server = await serve(connection, [], () => "Hello.", warnings);
    const client = await attached(server.url, "lost");
    const reply = await client.request({ type: "prompt", input: "first" });
    expect(stalled).toBe(true);
    // Before the fix: an ack, then a snapshot without the prompt, and no process ever ran it.
    expect(reply).toMatchObject({ type: "error", code: "session_moved" });
    expect(reply.type === "error" && reply.message).toContain("was not taken");
    expect(await transcriptRoles("lost")).toStrictEqual([]);
    expect((await reader.xrange("rxagent:{lost}:events", "-", "+")).map(([, fields]) => fields[1])).toStrictEqual([]);
    // The refused frames the client was shown are replaced by a snapshot of what Redis holds.
    await waitFor(() => client.frames.filter((frame) => frame.type === "snapshot").length === 2, "a snapshot after the lost lease", 20_000);
    expect(client.agentEvents()).toStrictEqual([]);
    // Sent again, it runs once.
    expect(await client.request({ type: "prompt", input: "again" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.agentEvents().some((event) => event.type === "agent_end"), "the second prompt's run to end", 20_000);
    expect(client.agentEvents().filter((event) => event.type === "agent_end")).toStrictEqual([expect.objectContaining({ reason: "idle" })]);
    await pollUntil(async () => ((await reader.exists("rxagent:{lost}:lease")) === 0 ? true : undefined), "the lease to go back");
    expect(await transcriptRoles("lost")).toStrictEqual(["user:again", "assistant:"]);
    // Which of the runner's writes Redis refuses first (the run's first frame, or the check that
    // the prompt's writes were stored) depends on the load: both say the lease was lost. Only the
    // first was accepted here, and a full suite once found two warnings without it (2026-12-03).
    // Under load the run's one reply may also end before Redis answers the check: the loss is then
    // told as frames of an ended run refused (a full suite found no other warning, 2026-12-04).
    const lost = /^session lost: (stopped its run here: its lease [^.]+\.|Redis refused frames of the run that ended here \(its lease [^)]+\); its clients here get a snapshot\.)$/;
    expect(warnings.filter((text) => text.startsWith("session lost: stopped its run here: ") || text.startsWith("session lost: Redis refused frames"))).toStrictEqual([expect.stringMatching(lost)]);
  }, 60_000);

  it("a lease lost after the prompt's message was stored, before its frame: the prompt is acked and answered once, by the takeover", async () => {
    const connection = withSessionScripts(new Redis(redisServer.url));
    const appendFrame = connection.rxagentAppendFrame.bind(connection);
    let cut = false;
    // Deleted on the runner's own connection, so between the prompt's transcript append and its message_end frame.
    connection.rxagentAppendFrame = (lease, ...rest) => {
      const [, , , , type, json] = rest;
      if (!cut && type === "message_end" && json.includes('"role":"user"')) {
        cut = true;
        void connection.del(lease);
      }
      return appendFrame(lease, ...rest);
    };
    const server = await serve(connection, [], () => "Hello.");
    const client = await attached(server.url, "half");
    // Redis holds the prompt: a takeover runs it, so the sender must not be told to send it again.
    expect(await client.request({ type: "prompt", input: "once" })).toMatchObject({ type: "ack" });
    expect(cut).toBe(true);
    await waitFor(() => client.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the takeover to end the dead run and answer", 20_000);
    expect(client.agentEvents().filter((event) => event.type === "agent_end")).toStrictEqual([
      { type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT },
      expect.objectContaining({ type: "agent_end", reason: "idle" }),
    ]);
    await pollUntil(async () => ((await reader.exists("rxagent:{half}:lease")) === 0 ? true : undefined), "the lease to go back");
    expect(await transcriptRoles("half")).toStrictEqual(["user:once", "assistant:"]);
  }, 60_000);

  for (const type of ["steer", "follow_up", "abort"] as const) {
    it(`${type}, taken after the lease was lost (nothing told the process yet): the sender gets session_moved, not an ack; the run is taken over`, async () => {
      const { wait, toolStarted } = waitTool();
      withoutRenewals();
      const session = `queued-${type}`;
      const server = await serve(redisServer.url, [wait], callThenAnswer("wait"));
      const client = await attached(server.url, session);
      expect(await client.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
      await toolStarted();
      vi.restoreAllMocks();
      // The tool runs, no frame is sent: the process learns nothing until it writes again.
      await reader.del(`rxagent:{${session}}:lease`);
      const reply = await client.request(type === "abort" ? { type } : { type, input: "and also this" });
      // Before the fix: an ack, for a message only this process's queue held, dropped with its run
      // (an abort: the takeover went on with the run it had stopped here).
      expect(reply).toMatchObject({ type: "error", code: "session_moved" });
      await waitFor(() => client.agentEvents().filter((event) => event.type === "agent_end").length === 2, "the takeover to end the dead run and finish it", 20_000);
      await pollUntil(async () => ((await reader.exists(`rxagent:{${session}}:lease`)) === 0 ? true : undefined), "the lease to go back");
      expect(await transcriptRoles(session)).toStrictEqual(["user:go", "assistant:", "toolResult:", "assistant:"]);
      // Refused by Redis, a steer or follow-up is not in the session's queue either: no run delivers it later.
      expect(await reader.lrange(`rxagent:{${session}}:queue`, 0, -1)).toStrictEqual([]);
    }, 60_000);
  }

  it("Redis does not answer (paused past the connection's commandTimeout): the sender of a steer and of an abort gets internal, saying it may or may not have been taken; nothing hangs", async () => {
    // A server of its own: pausing it leaves the other tests' server alone.
    const stalled = await RedisServerProcess.start();
    closing.push(() => stalled.stop());
    const { wait, toolStarted } = waitTool();
    const connection = new Redis(stalled.url, { commandTimeout: 300 });
    const warnings: string[] = [];
    const server = await serve(connection, [wait], callThenAnswer("wait"), warnings);
    const client = await attached(server.url, "stalled");
    expect(await client.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
    await toolStarted();
    // The tool may start before its assistant message ends (eager calls): paused only once Redis
    // holds that message and the tool's start, so what fails below is the commands' own writes.
    const stalledReader = new Redis(stalled.url);
    await pollUntil(async () => {
      const [length, last] = await Promise.all([stalledReader.llen("rxagent:{stalled}:transcript"), stalledReader.xrevrange("rxagent:{stalled}:events", "+", "-", "COUNT", 1)]);
      return length === 2 && last[0]?.[1][1] === "tool_execution_start" ? true : undefined;
    }, "Redis to hold the run so far");
    stalledReader.disconnect();
    stalled.pause();
    try {
      for (const type of ["steer", "abort"] as const) {
        const reply = await client.request(type === "abort" ? { type } : { type, input: "and also this" });
        expect(reply).toMatchObject({ type: "error", code: "internal", message: `Redis did not confirm this ${type} (Command timed out): it may or may not have been taken; look at the session before sending it again.` });
      }
    } finally {
      stalled.resume();
    }
    expect(warnings).toContain("session stalled: could not keep a steer on Redis: Command timed out");
  }, 60_000);

  for (const type of ["approve", "deny"] as const) {
    it(`${type}, taken after the lease was lost: the sender gets session_moved and the tool does not run; the call waits again on the takeover, and the ${type} sent again there settles it once`, async () => {
      const ran: string[] = [];
      withoutRenewals();
      const session = `settle-${type}`;
      const server = await serve(redisServer.url, approvalTools(ran), callThenAnswer("deploy"));
      const client = await attached(server.url, session);
      expect(await client.request({ type: "prompt", input: "deploy it" })).toMatchObject({ type: "ack" });
      await waitFor(() => client.hasEvent("tool_approval_start"), "the call to wait for approval", 20_000);
      vi.restoreAllMocks();
      await reader.del(`rxagent:{${session}}:lease`);
      // Before the fix: an ack (for an approve, the tool ran here), and the takeover had the call wait again.
      expect(await client.request({ type, toolCallId: "c1" })).toMatchObject({ type: "error", code: "session_moved" });
      expect(ran).toStrictEqual([]);
      await waitFor(() => {
        const events = client.agentEvents();
        return events.some((event) => event.type === "agent_end" && event.errorMessage === TAKEOVER_TEXT) && events.at(-1)?.type === "tool_approval_start";
      }, "the takeover to reopen the waiting call", 20_000);
      expect(await client.request({ type, toolCallId: "c1" })).toMatchObject({ type: "ack" });
      await waitFor(() => client.agentEvents().at(-1)?.type === "agent_end", "the run to end", 20_000);
      expect(client.agentEvents().at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
      expect(ran).toStrictEqual(type === "approve" ? ["c1"] : []);
    }, 60_000);
  }
});
