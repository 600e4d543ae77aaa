import { Type } from "@sinclair/typebox";
import { Redis } from "ioredis";
import { asyncScheduler } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { type RedisSessions, redisSessions, RedisTranscriptStore } from "../../src/redis/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentMessage } from "../../src/types.js";
import { assertContiguous, RawClient, waitFor } from "../server/helpers.js";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";

// Three processes share sessions on a real redis-server; over N runs (seeded), the runner is
// stopped without releasing its lease (as a crash leaves it) or Redis is restarted at a random
// point. After each run: every call has one result, every prompt at most one answer (one when
// the run ended idle), the stream's message_end frames are the transcript, and a client that
// resumes from its last seq gets an exact replay or a snapshot. Opt-in, not in `npm test`: a clean
// CI run (seed 101, 5 runs) once saw a run that had not ended on Redis after 30 s, a fault not yet
// found (docs/redis.md). CHAOS_RUNS=5 runs 5 runs on each of three seeds; CHAOS_SEED picks one
// (CHAOS_RUNS=40 CHAOS_SEED=7 npx vitest run test/redis/chaos.test.ts).

const RUNS = Number(process.env["CHAOS_RUNS"] ?? 0);
const SEEDS = process.env["CHAOS_SEED"] === undefined ? [7, 28, 101] : [Number(process.env["CHAOS_SEED"])];
const LEASE_MS = 500;

/** mulberry32: a small seeded generator, so a failing sequence can be run again. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const calc = defineTool({
  name: "calc",
  description: "Computes",
  parameters: Type.Object({}),
  execute: () => new Promise<ReturnType<typeof textResult>>((resolve) => setTimeout(() => resolve(textResult("42")), 30)),
});

/** A prompt gets a call, the call's result gets the answer: whatever the process, whatever the call number. */
const reply: ScriptedTurn = (context) => {
  const last = context.messages.at(-1);
  if (last?.role === "toolResult") return "The answer is forty two, as computed.";
  return { content: [{ type: "toolCall", id: `call-${context.messages.length}`, name: "calc", arguments: {} }] };
};

interface Process {
  sessions: RedisSessions;
  server: AgentServer;
}

describe.skipIf(!hasRedisServer || RUNS === 0)("chaos: three processes, Redis restarts and runner deaths", () => {
  let redisServer: RedisServerProcess;
  let reader: Redis;
  const counts = { runs: 0, runnerStopped: 0, redisRestarted: 0, endedIdle: 0, endedFailed: 0, replays: 0, snapshots: 0 };

  beforeAll(async () => {
    redisServer = await RedisServerProcess.start();
    reader = new Redis(redisServer.url);
    reader.on("error", () => undefined);
  }, 30_000);

  afterAll(async () => {
    reader?.disconnect();
    await redisServer?.stop();
    console.log(`chaos (seeds ${SEEDS.join(", ")}): ${JSON.stringify(counts)}`);
  });

  async function startProcess(): Promise<Process> {
    const sessions = redisSessions({
      redis: redisServer.url,
      leaseMs: LEASE_MS,
      onWarning: () => undefined,
      createAgent: (_id, store) => Agent.open({ store, tools: [calc], model: scriptedModel(Array.from({ length: 50 }, () => reply), { scheduler: asyncScheduler, delay: 10 }) }),
    });
    const server = await serveAgents({ port: 0, ...sessions.serveOptions });
    return { sessions, server };
  }

  /** As a crash leaves it: the lease stays until it expires, nothing more is written. */
  async function stopAbruptly(process: Process): Promise<void> {
    await process.sessions.close();
    await process.server.close();
  }

  it.each(SEEDS)(`${RUNS} runs keep every promise (seed %i)`, async (seed) => {
    const random = seeded(seed);
    const processes = await Promise.all([startProcess(), startProcess(), startProcess()]);
    const clients: RawClient[] = [];
    try {
      for (let run = 0; run < RUNS; run++) {
        counts.runs += 1;
        const session = `chaos-${seed}-${run}`;
        const attached = await Promise.all(
          processes.map(async (process) => {
            const client = await RawClient.open(process.server.url);
            clients.push(client);
            await client.request({ type: "attach", session });
            return client;
          }),
        );
        const runnerIndex = Math.floor(random() * 3);
        expect(await attached[runnerIndex]!.request({ type: "prompt", input: `question ${run}` })).toMatchObject({ type: "ack" });
        const fault = random();
        const delayMs = Math.floor(random() * 150);
        let watchers = attached;
        if (fault < 0.4) {
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          counts.runnerStopped += 1;
          await stopAbruptly(processes[runnerIndex]!);
          processes[runnerIndex] = await startProcess();
          watchers = attached.filter((_client, index) => index !== runnerIndex);
        } else if (fault < 0.7) {
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          counts.redisRestarted += 1;
          await redisServer.down();
          await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 300)));
          await redisServer.up();
        }
        // The run is over when Redis holds no lease, its stream ends with an agent_end, and every
        // watcher shows that last frame (a process whose frames Redis refused sends a snapshot).
        const lastStored = await pollRedis(async () => {
          if ((await reader.exists(`rxagent:{${session}}:lease`)) !== 0) return undefined;
          const [newest] = await reader.xrevrange(`rxagent:{${session}}:events`, "+", "-", "COUNT", 1);
          return newest?.[1][1] === "agent_end" ? Number.parseInt(newest[0], 10) : undefined;
        }, "the run to end on Redis");
        await waitFor(() => watchers.every((watcher) => lastSeqOf(watcher) === lastStored), "every watcher to show the run's end", 30_000);
        const [, endFields] = (await reader.xrevrange(`rxagent:{${session}}:events`, "+", "-", "COUNT", 1))[0]!;
        const last = (JSON.parse(endFields[3] as string) as { event: AgentEvent }).event;
        if (last.type === "agent_end" && last.reason === "idle") counts.endedIdle += 1;
        else counts.endedFailed += 1;

        const transcript = await new RedisTranscriptStore(reader, session).load();
        const answers = transcript.filter((message) => message.role === "assistant" && message.content.some((block) => block.type === "text"));
        expect(unpairedCalls(transcript)).toStrictEqual([]);
        expect(answers.length).toBeLessThanOrEqual(1);
        if (last.type === "agent_end" && last.reason === "idle") expect({ run, fault, answers: answers.length, roles: transcript.map((message) => message.role) }).toMatchObject({ answers: 1 });
        const streamed = (await reader.xrange(`rxagent:{${session}}:events`, "-", "+")).flatMap(([, fields]) => {
          const frame = JSON.parse(fields[3] as string) as { type: string; event?: { type: string; message?: AgentMessage } };
          return frame.type === "event" && frame.event?.type === "message_end" && frame.event.message ? [frame.event.message] : [];
        });
        expect(streamed).toStrictEqual(transcript);

        // Every watcher resumes from its last seq on another process: an exact replay or a snapshot.
        for (const watcher of watchers) {
          const lastSeq = lastSeqOf(watcher);
          const epoch = (watcher.frames.findLast((frame) => frame.type === "snapshot") as { epoch: string } | undefined)?.epoch;
          if (lastSeq === undefined || epoch === undefined) continue;
          const resumed = await RawClient.open(processes[Math.floor(random() * 3)]!.server.url);
          clients.push(resumed);
          const ack = await resumed.request({ type: "attach", session, lastSeq, epoch });
          if (ack.type === "ack" && ack.resume === "replay") {
            counts.replays += 1;
            await waitFor(() => (resumed.events().at(-1)?.seq ?? lastSeq) === lastStored, "the replay to reach the last stored frame", 20_000);
            assertContiguous(resumed.events(), lastSeq);
          } else {
            counts.snapshots += 1;
            expect(ack).toMatchObject({ type: "ack", resume: "snapshot" });
          }
        }
      }
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      for (const process of processes) {
        await process.server.close();
        await process.sessions.close();
      }
    }
  }, 300_000);
});

/** The seq of the last frame a client got: an event, an update, or a snapshot. */
function lastSeqOf(client: RawClient): number | undefined {
  const last = client.frames.findLast((frame) => frame.type === "event" || frame.type === "update" || frame.type === "snapshot");
  return last && "seq" in last ? last.seq : undefined;
}

/** Polls Redis until `check` gives a value (a failed read, Redis being down, counts as none yet). */
async function pollRedis<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function unpairedCalls(messages: AgentMessage[]): string[] {
  const calls = messages.flatMap((message) => (message.role === "assistant" ? message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : [])) : []));
  const results = messages.flatMap((message) => (message.role === "toolResult" ? [message.toolCallId] : []));
  return calls.filter((id) => results.filter((result) => result === id).length !== 1);
}
