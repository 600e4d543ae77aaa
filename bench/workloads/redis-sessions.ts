import { randomUUID } from "node:crypto";
import { asyncScheduler } from "rxjs";
import { WebSocket } from "ws";
import { redisSessions } from "../../src/redis/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { TranscriptStore } from "../../src/types.js";
// The tests' helper: a real redis-server on a free port with a data folder of its own.
import { hasRedisServer, RedisServerProcess } from "../../test/redis/redis-server.js";
import { summarize } from "../stats.js";
import type { BenchOptions, WorkloadResult } from "./harness.js";

const WORDS = 100;
const REPLY = Array.from({ length: WORDS }, (_, index) => `w${index}`).join(" ");

interface Setup {
  /** The server the prompting client uses (and that runs the session), and the one a watching client uses. */
  runner: AgentServer;
  watcher: AgentServer;
  /** Emission times of each session's events, by sequence number (seq k = k-th event of the run). */
  emitted: Map<string, number[]>;
  close(): Promise<void>;
}

/**
 * W7 sessions over Redis: S sessions, each with a client on two servers; one client prompts, a
 * scripted reply of 100 words streams. Compared: one process in memory (both clients on one
 * server) and two servers sharing the sessions through Redis (`rxagent/redis`; the watching
 * client on the server that does not run the session). Both servers run in this process (one
 * CPU budget, so the Redis figure includes both sides' work). Figures: events/s delivered to the
 * watching clients with the model emitting at once, and the latency from the Agent's emission
 * to the watching client's socket with the model pacing 2 ms per token. Redis runs with
 * `appendfsync everysec` (its usual setting). Skipped without
 * /usr/bin/redis-server.
 */
export async function redisSessionsWorkload(options: BenchOptions): Promise<WorkloadResult> {
  const result: WorkloadResult = { id: "W7", title: "sessions over Redis: two processes against one", rows: [], targets: [], eventCounts: {} };
  if (!hasRedisServer) {
    options.log("W7 sessions over Redis: skipped, /usr/bin/redis-server is not installed");
    return result;
  }
  const sessions = options.quick ? 4 : 50;
  const latencySessions = options.quick ? 2 : 10;
  const reps = options.quick ? 1 : 5;
  // Redis's usual durability (fsync once a second); with `always` every write waits for the disk.
  const redisServer = await RedisServerProcess.start("everysec");
  try {
    const configurations: [string, () => Promise<Setup>][] = [
      ["one process, in memory", () => inMemory()],
      ["two processes on Redis", () => onRedis(redisServer.url)],
    ];
    const throughput = new Map<string, number[]>();
    const latency = new Map<string, number[]>();
    // Rep 0 warms up (the first run of each path compiles it) and is not counted.
    for (let rep = 0; rep <= reps; rep++) {
      for (const [name, setup] of configurations) {
        options.log(`W7 sessions over Redis: ${name}, ${sessions} sessions, ${rep === 0 ? "warm-up" : `rep ${rep}/${reps}`}`);
        const burst = await measure(await setup(), sessions, 0, `b${rep}`);
        // Fewer sessions for latency, so it shows the cost of the path rather than a saturated CPU.
        const paced = await measure(await setup(), latencySessions, 2, `p${rep}`);
        if (rep === 0) continue;
        (throughput.get(name) ?? throughput.set(name, []).get(name))?.push(burst.events / (burst.ms / 1000));
        (latency.get(name) ?? latency.set(name, []).get(name))?.push(paced.medianLatencyMs);
      }
    }
    const burstCase = `${sessions} sessions x 1 run (${WORDS + 8} events each) at once, 2 clients per session`;
    const pacedCase = `${latencySessions} sessions x 1 run, 2 ms per token, 2 clients per session`;
    for (const [name] of configurations) {
      result.rows.push({ workload: "W7 sessions over Redis", case: `${burstCase}: ${name}`, metric: "events/s to the watching clients", unit: "k/s", values: { rxagent: summarize((throughput.get(name) ?? []).map((value) => value / 1000)) } });
      result.rows.push({ workload: "W7 sessions over Redis", case: `${pacedCase}: ${name}`, metric: "latency per event (median)", unit: "ms", values: { rxagent: summarize(latency.get(name) ?? []) } });
    }
    const added = (latency.get(configurations[1]![0]) ?? []).map((value, index) => value - (latency.get(configurations[0]![0])?.[index] ?? 0));
    result.rows.push({ workload: "W7 sessions over Redis", case: pacedCase, metric: "added latency per event (Redis minus one process)", unit: "ms", values: { rxagent: summarize(added) }, note: "no target yet" });
  } finally {
    await redisServer.stop();
  }
  return result;
}

async function inMemory(): Promise<Setup> {
  const emitted = new Map<string, number[]>();
  const server = await serveAgents({ port: 0, rateLimit: false, maxSessions: 10_000, createAgent: (sessionId) => watched(new Agent({ model: model() }), sessionId, emitted) });
  return { runner: server, watcher: server, emitted, close: () => server.close() };
}

async function onRedis(url: string): Promise<Setup> {
  const emitted = new Map<string, number[]>();
  const open = (store: TranscriptStore, sessionId: string) => Agent.open({ store, model: model() }).then((agent) => watched(agent, sessionId, emitted));
  const keyPrefix = `bench:${randomUUID()}:`;
  const first = redisSessions({ redis: url, keyPrefix, createAgent: (sessionId, store) => open(store, sessionId) });
  const second = redisSessions({ redis: url, keyPrefix, createAgent: (sessionId, store) => open(store, sessionId) });
  const [runner, watcher] = await Promise.all([serveAgents({ port: 0, rateLimit: false, maxSessions: 10_000, ...first.serveOptions }), serveAgents({ port: 0, rateLimit: false, maxSessions: 10_000, ...second.serveOptions })]);
  return {
    runner,
    watcher,
    emitted,
    async close() {
      await Promise.all([runner.close(), watcher.close()]);
      await Promise.all([first.close(), second.close()]);
    },
  };
}

function model() {
  return pace === 0 ? scriptedModel([REPLY]) : scriptedModel([REPLY], { scheduler: asyncScheduler, delay: pace });
}
/** The model's time per token for the next setup (0: the whole reply at once). */
let pace = 0;

function watched(agent: Agent, sessionId: string, emitted: Map<string, number[]>): Agent {
  const times: number[] = [];
  emitted.set(sessionId, times);
  agent.events$.subscribe(() => times.push(performance.now()));
  return agent;
}

async function measure(setup: Setup, sessions: number, delay: number, tag: string): Promise<{ ms: number; events: number; medianLatencyMs: number }> {
  pace = delay;
  try {
    const ids = Array.from({ length: sessions }, (_, index) => `${tag}-${index}`);
    const watchers = await Promise.all(ids.map((id) => client(setup.watcher.url, id)));
    const prompters = await Promise.all(ids.map((id) => client(setup.runner.url, id)));
    const start = performance.now();
    for (const prompter of prompters) prompter.socket.send(JSON.stringify({ type: "prompt", id: "p", input: "go" }));
    await Promise.all(watchers.map((watcher) => watcher.ended));
    const ms = performance.now() - start;
    const latencies: number[] = [];
    let events = 0;
    ids.forEach((id, index) => {
      const sent = setup.emitted.get(id) ?? [];
      const received = watchers[index]!.received;
      events += received.size;
      for (const [seq, at] of received) if (sent[seq - 1] !== undefined) latencies.push(at - sent[seq - 1]!);
    });
    for (const connected of [...watchers, ...prompters]) connected.socket.close();
    return { ms, events, medianLatencyMs: summarize(latencies).median };
  } finally {
    await setup.close();
  }
}

/** A client attached to a session: the receipt time of each event frame by seq, and when agent_end came. */
async function client(url: string, session: string): Promise<{ socket: WebSocket; received: Map<number, number>; ended: Promise<void> }> {
  const socket = new WebSocket(url);
  const received = new Map<number, number>();
  let attached: () => void = () => undefined;
  let ended: () => void = () => undefined;
  const attachedPromise = new Promise<void>((resolve) => (attached = resolve));
  const endedPromise = new Promise<void>((resolve) => (ended = resolve));
  socket.on("message", (data) => {
    const at = performance.now();
    const frame = JSON.parse(String(data)) as { type: string; id?: string; seq?: number; event?: { type: string } };
    if (frame.type === "ack" && frame.id === "a") attached();
    if ((frame.type === "event" || frame.type === "update") && frame.seq !== undefined) received.set(frame.seq, at);
    if (frame.type === "event" && frame.event?.type === "agent_end") ended();
  });
  await new Promise<void>((resolve, reject) => socket.once("open", () => resolve()).once("error", reject));
  socket.send(JSON.stringify({ type: "attach", id: "a", session }));
  await attachedPromise;
  return { socket, received, ended: endedPromise };
}
