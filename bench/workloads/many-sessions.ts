import type { Implementation, Scenario } from "../implementations/implementation.js";
import { scaleSummary, summarize } from "../stats.js";
import {
  assertSameCounts,
  collectGarbage,
  countingSink,
  type BenchOptions,
  type EventCounts,
  floorRatioOf,
  gcShareRow,
  interleaved,
  pairRatios,
  type ResultRow,
  type TargetCheck,
  timed,
  withBothReferencePaths,
  type WorkloadResult,
} from "./harness.js";
import { buildConversation } from "./replies.js";
import { instantTool } from "./tools.js";

/**
 * W5 many sessions: A agents in one process, each running a short scripted conversation (a reply
 * of 10 deltas and 1 tool call, then a reply of 10 deltas), all at once. Each model call waits
 * 1 ms on a real timer so the sessions interleave. Aggregate events per second; heap in flight
 * per waiting session (A runs started and all waiting for their model's timer); memory per idle
 * agent (A agents that ran the conversation and sit idle): heap after GC divided by A.
 */
export async function manySessions(options: BenchOptions): Promise<WorkloadResult> {
  const agents = options.quick ? 50 : 1000;
  const replies = buildConversation(1, { deltas: 10, toolCalls: 1 }, 10);
  const scenario = (): Scenario => ({ replies, tool: instantTool, modelDelayMs: 1 });
  options.log(`W5 many sessions: ${agents} concurrent runs`);
  // Five rounds of warm-up, not two: run alone (`--only W5`), rxagent's third to fifth rounds of
  // 1,000 sessions were still slower than its later ones (2 warm-up rounds and 7 timed: 0.674x and
  // 0.687x the reference; 5 and 7: 0.466x and 0.516x; the reference's own time the same either
  // way); in a full bench run it moved nothing (bench/README.md, "W5's warm-up"). 21 timed rounds,
  // not 7: a round's time spreads over 2-3x with the collections that land in it.
  const [warmup, reps] = options.quick ? [0, 1] : [5, 21];
  // Both reference paths for the timed runs and the waiting sessions (an EventStream per session);
  // idle agents are the same pi-agent-core `Agent` either way, so measured once.
  const implementations = withBothReferencePaths(options);
  const { samples, counts } = await interleaved("W5", implementations, warmup, reps, async (implementation) => {
    const sinks = Array.from({ length: agents }, () => countingSink());
    const run = await timed(() => Promise.all(sinks.map(({ sink }) => implementation.run(scenario(), sink))), {});
    const total: EventCounts = {};
    for (const { counts: perAgent } of sinks) {
      assertSameCounts("W5 per agent", sinks[0]!.counts, perAgent, implementation.name);
      for (const type in perAgent) total[type] = (total[type] ?? 0) + perAgent[type]!;
    }
    return { ...run, counts: total };
  });
  const events = Object.values(counts).reduce((sum, count) => sum + count, 0);
  const throughput: ResultRow["values"] = {};
  const wall: ResultRow["values"] = {};
  for (const [name, runs] of samples) {
    throughput[name] = summarize(runs.map((run) => events / (run.ms / 1000)));
    wall[name] = summarize(runs.map((run) => run.ms));
  }
  const paired = pairRatios(samples);
  const caseName = `${agents} agents x 2 turns (${events / agents} events each)`;
  const rows: ResultRow[] = [
    { workload: "W5 many sessions", case: caseName, metric: "wall time", unit: "ms", values: wall, ...paired },
    { workload: "W5 many sessions", case: caseName, metric: "aggregate events/s", unit: "k/s", values: Object.fromEntries(Object.entries(throughput).map(([name, summary]) => [name, summary && scaleSummary(summary, 1 / 1000)])) },
    gcShareRow({ workload: "W5 many sessions", case: caseName }, samples),
  ];

  options.log(`W5 many sessions: heap in flight per waiting session (${agents} sessions)`);
  const inFlight: ResultRow["values"] = {};
  for (const implementation of implementations) {
    const perSession: number[] = [];
    for (let rep = 0; rep < (options.quick ? 1 : 3); rep++) perSession.push(await waitingBytes(implementation, replies, agents));
    inFlight[implementation.name] = summarize(perSession);
  }
  rows.push({
    workload: "W5 many sessions",
    case: `${agents} sessions started, all waiting for their model`,
    metric: "heap in flight per waiting session",
    unit: "bytes",
    values: inFlight,
    ...floorRatioOf(inFlight),
    note: "heap after a full GC with every session waiting on its model timer, minus before, / sessions",
  });

  options.log(`W5 many sessions: memory per idle agent (${agents} agents)`);
  const memory: ResultRow["values"] = {};
  for (const implementation of options.implementations) {
    const perAgent: number[] = [];
    for (let rep = 0; rep < (options.quick ? 1 : 3); rep++) perAgent.push(await idleBytes(implementation, scenario, agents));
    memory[implementation.name] = summarize(perAgent);
  }
  rows.push({
    workload: "W5 many sessions",
    case: `${agents} idle agents after the conversation`,
    metric: "heap per idle agent",
    unit: "bytes",
    values: memory,
    ...floorRatioOf(memory),
    note: "rxagent: Agent; reference: pi-agent-core Agent; floor: the transcript array",
  });
  const targets: TargetCheck[] = [];
  if (paired.ratio) {
    targets.push({ workload: "W5", target: "wall time <= 0.7x reference (GC counted)", measured: `${paired.ratio.median.toFixed(2)}x`, met: paired.ratio.median <= 0.7 });
    targets.push({ workload: "W5", target: "wall time <= 0.5x reference (GC counted; issue 35)", measured: `${paired.ratio.median.toFixed(3)}x`, met: paired.ratio.median <= 0.5 });
  }
  if (inFlight.rxagent && inFlight.reference) {
    const { rxagent, reference } = inFlight;
    targets.push({
      workload: "W5",
      target: "heap in flight per waiting session <= reference's",
      measured: `${rxagent.median.toFixed(0)} B vs ${reference.median.toFixed(0)} B`,
      met: rxagent.median <= reference.median,
    });
    const ratio = rxagent.median / reference.median;
    targets.push({
      workload: "W5",
      target: "heap in flight per waiting session <= 0.8x reference's (issue 35)",
      measured: `${ratio.toFixed(3)}x (${rxagent.median.toFixed(0)} B vs ${reference.median.toFixed(0)} B)`,
      met: ratio <= 0.8,
    });
  }
  if (memory.rxagent) {
    targets.push({ workload: "W5", target: "idle Agent <= 2 KB", measured: `${memory.rxagent.median.toFixed(0)} B`, met: memory.rxagent.median <= 2048 });
  }
  return { id: "W5", title: "many sessions: concurrent agents in one process", rows, targets, eventCounts: { [caseName]: counts } };
}

/**
 * Heap per session while `sessions` runs are started and all wait for their model: heap after
 * a full GC before starting them, and once every run has reached its model call (a `setImmediate`
 * later: rxagent calls the model on subscribe, the reference after a few Promise ticks), minus
 * each other, over `sessions`. The model waits long enough for the reading to happen first.
 * What the harness itself holds per session (a sink and its counts) is made before the first reading.
 */
export async function waitingBytes(implementation: Implementation, replies: Scenario["replies"], sessions: number): Promise<number> {
  const scenarios = Array.from({ length: sessions }, (): Scenario => ({ replies, tool: instantTool, modelDelayMs: 200 }));
  const sinks = Array.from({ length: sessions }, () => countingSink());
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const runs = scenarios.map((scenario, index) => implementation.run(scenario, sinks[index]!.sink));
  await new Promise<void>((resolve) => setImmediate(resolve));
  collectGarbage();
  const during = process.memoryUsage().heapUsed;
  await Promise.all(runs);
  if (sinks.some(({ counts }) => (counts.agent_end ?? 0) !== 1)) throw new Error(`W5 waiting sessions: a ${implementation.name} run did not end once`);
  return (during - before) / sessions;
}

async function idleBytes(implementation: Implementation, scenario: () => Scenario, agents: number): Promise<number> {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const idle = await Promise.all(Array.from({ length: agents }, () => implementation.idleAgent(scenario())));
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  if (idle.length !== agents) throw new Error("unreachable");
  return (after - before) / agents;
}
