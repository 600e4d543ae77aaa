import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisTranscriptStore, TAKEOVER_TEXT } from "../../src/redis/index.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/streams/transcript/repair-transcript.js";
import type { AgentEvent, AgentMessage } from "../../src/types.js";
import { type CliProcess, startCli } from "../cli/cli-process.js";
import { assertContiguous, RawClient, waitFor } from "../server/helpers.js";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";

const LEASE_MS = 1500;
/** Process start on a loaded machine can take a while. */
const START_MS = 60_000;

/** An `rxagent serve --redis` process on the offline demo model, and its WebSocket URL. */
async function serveOnRedis(url: string): Promise<{ cli: CliProcess; wsUrl: string }> {
  const cli = startCli(["serve", "--port", "0", "--demo", "--delay", "30", "--redis", url, "--lease", String(LEASE_MS)]);
  await cli.waitFor((stdout) => /Serving the web UI at http:\/\/127\.0\.0\.1:\d+\//.test(stdout), START_MS);
  const port = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(cli.stdout())?.[1] ?? "";
  return { cli, wsUrl: `ws://127.0.0.1:${port}/ws` };
}

/** Every tool call of the transcript has exactly one result. */
function unpairedCalls(messages: AgentMessage[]): string[] {
  const calls = messages.flatMap((message) => (message.role === "assistant" ? message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : [])) : []));
  const results = messages.flatMap((message) => (message.role === "toolResult" ? [message.toolCallId] : []));
  return calls.filter((id) => results.filter((result) => result === id).length !== 1);
}

function endsOf(events: AgentEvent[]): Extract<AgentEvent, { type: "agent_end" }>[] {
  return events.filter((event): event is Extract<AgentEvent, { type: "agent_end" }> => event.type === "agent_end");
}

describe.skipIf(!hasRedisServer)("rxagent serve --redis: two processes serve the same sessions", () => {
  let redisServer: RedisServerProcess;
  let redis: Redis;
  let processA: { cli: CliProcess; wsUrl: string };
  let processB: { cli: CliProcess; wsUrl: string };
  const clients: RawClient[] = [];

  async function attach(wsUrl: string, session: string, lastSeq?: number, epoch?: string): Promise<RawClient> {
    const client = await RawClient.open(wsUrl);
    clients.push(client);
    const reply = await client.request({ type: "attach", session, ...(lastSeq === undefined ? {} : { lastSeq, epoch }) });
    expect(reply).toMatchObject({ type: "ack", session });
    return client;
  }

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
    redis = new Redis(redisServer.url);
    // Its reconnection attempts while Redis restarts are expected.
    redis.on("error", () => undefined);
    [processA, processB] = await Promise.all([serveOnRedis(redisServer.url), serveOnRedis(redisServer.url)]);
  }, START_MS);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    for (const { cli } of [processA, processB]) {
      if (cli && cli.child.exitCode === null && cli.child.signalCode === null) {
        cli.child.kill("SIGINT");
        await cli.exited;
      }
    }
    redis?.disconnect();
    await redisServer?.stop();
  }, 30_000);

  it("a client of B prompts and steers the run A holds, and sees every event in order", async () => {
    const onA = await attach(processA.wsUrl, "shared");
    const onB = await attach(processB.wsUrl, "shared");
    expect(await onA.request({ type: "prompt", input: "Tell me about rxagent." })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => onB.hasEvent("message_update"), "B to see the run of A", 20_000);
    // The prompt goes to A, which runs the session and says so.
    const busy = await onB.request({ type: "prompt", input: "Another one" });
    expect(busy).toMatchObject({ type: "error", id: "t2", code: "busy" });
    expect(await onB.request({ type: "steer", input: "Now tell me the time." })).toStrictEqual({ type: "ack", id: "t3" });
    await waitFor(() => endsOf(onA.agentEvents()).length === 1 && endsOf(onB.agentEvents()).length === 1, "the run to end on both", 30_000);
    assertContiguous(onA.events(), 0);
    expect(onB.events()).toStrictEqual(onA.events());
    const transcript = await new RedisTranscriptStore(redis, "shared").load();
    expect(transcript.filter((message) => message.role === "user").map((message) => message.content)).toStrictEqual(["Tell me about rxagent.", "Now tell me the time."]);
    expect(unpairedCalls(transcript)).toStrictEqual([]);
  }, 60_000);

  it("A killed with SIGKILL mid-run: B takes over within the lease, nothing is lost, a client resumes without a gap", async () => {
    const onA = await attach(processA.wsUrl, "takeover");
    const onB = await attach(processB.wsUrl, "takeover");
    expect(await onA.request({ type: "prompt", input: "What is (1+2)*(3+4)*(5+6)?" })).toStrictEqual({ type: "ack", id: "t2" });
    // The calculator takes a step every 180 ms (6 x --delay): A's own client hears it start first.
    await waitFor(() => onA.hasEvent("tool_execution_start"), "the calculator to start on A", 20_000);
    // What bounds the takeover is the lease A holds, and it is the one --lease asked for: checked on
    // the key rather than on the wall clock, which a loaded machine stretches.
    const leaseLeft = await redis.pttl("rxagent:{takeover}:lease");
    expect(leaseLeft).toBeGreaterThan(0);
    expect(leaseLeft).toBeLessThanOrEqual(LEASE_MS);
    processA.cli.child.kill("SIGKILL");
    await processA.cli.exited;
    const lastSeenOnA = onA.events().at(-1)?.seq ?? 0;
    await waitFor(() => endsOf(onB.agentEvents()).length === 2, "B to end the dead run and finish the repaired one", 30_000);
    const ends = endsOf(onB.agentEvents());
    expect(ends[0]).toStrictEqual({ type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT });
    expect(ends[1]?.reason).toBe("idle");
    assertContiguous(onB.events(), 0);

    const transcript = await new RedisTranscriptStore(redis, "takeover").load();
    expect(unpairedCalls(transcript)).toStrictEqual([]);
    expect(transcript.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(transcript[2]).toMatchObject({ role: "toolResult", isError: true, content: [{ type: "text", text: INTERRUPTED_TOOL_TEXT }] });

    // A client of A reconnects to B with the last seq it saw and replays the rest, no gap.
    const epoch = (onA.frames.find((frame) => frame.type === "snapshot") as { epoch: string }).epoch;
    const resumed = await attach(processB.wsUrl, "takeover", lastSeenOnA, epoch);
    expect(resumed.frames[0]).toMatchObject({ type: "ack", resume: "replay" });
    const lastOnB = onB.events().at(-1)?.seq ?? 0;
    await waitFor(() => resumed.events().at(-1)?.seq === lastOnB, "the replay to reach B's last frame", 20_000);
    assertContiguous(resumed.events(), lastSeenOnA);
  }, 90_000);

  it("Redis restarted between turns: B reconnects, runs the next turn, and keeps everything that ended", async () => {
    const onB = await attach(processB.wsUrl, "takeover");
    const before = await new RedisTranscriptStore(redis, "takeover").load();
    await redisServer.restart();
    await waitFor(() => redis.status === "ready", "the test's own connection to come back", 20_000);
    expect(await new RedisTranscriptStore(redis, "takeover").load()).toStrictEqual(before);
    // B may still be reconnecting: its commands wait in ioredis's queue until it is back.
    expect(await onB.request({ type: "prompt", input: "What time is it?" })).toStrictEqual({ type: "ack", id: "t2" });
    await waitFor(() => endsOf(onB.agentEvents()).length === 1, "the turn after the restart to end", 30_000);
    const after = await new RedisTranscriptStore(redis, "takeover").load();
    expect(after.slice(0, before.length)).toStrictEqual(before);
    expect(after.slice(before.length).map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(unpairedCalls(after)).toStrictEqual([]);
    // At most B said the connection dropped (a quick restart may reconnect without an error), and
    // nothing else: no lost lease, no refused write.
    expect(processB.cli.stderr()).toMatch(/^(rxagent: Redis: [^\n]*; reconnecting\.\n)*$/);
  }, 60_000);
});

describe("rxagent serve --lease", () => {
  it("is a usage error without --redis", async () => {
    const cli = startCli(["serve", "--port", "0", "--lease", "1000"]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe("rxagent: --lease works with serve --redis.\nRun rxagent --help for the options.\n");
  }, START_MS);

  it("--redis at an address where no Redis answers: the server does not start, and says why", async () => {
    // Port 1: nothing listens there, so every connection is refused.
    const url = "redis://127.0.0.1:1";
    const cli = startCli(["serve", "--port", "0", "--redis", url]);
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toContain(`Redis at ${url} did not answer within 5000 ms.`);
  }, START_MS);

  it("--store with --redis is a usage error (the transcripts live in Redis)", async () => {
    const cli = startCli(["serve", "--port", "0", "--redis", "redis://127.0.0.1:1", "--store", "sessions"]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe("rxagent: --store and --redis exclude each other: with --redis the transcripts live in Redis.\nRun rxagent --help for the options.\n");
  }, START_MS);
});
