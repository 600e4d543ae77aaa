import type { Implementation, Scenario } from "../implementations/implementation.js";
import { scaleSummary, summarize } from "../stats.js";
import {
  assertSameCounts,
  collectGarbage,
  countingSink,
  type BenchOptions,
  type EventCounts,
  interleaved,
  pairRatios,
  repIsolation,
  type ResultRow,
  type WorkloadResult,
} from "./harness.js";
import { buildConversation } from "./replies.js";
import { instantTool } from "./tools.js";

/**
 * W5 many sessions: A agents in one process, each running a short scripted conversation (a reply
 * of 10 deltas and 1 tool call, then a reply of 10 deltas), all at once. Each model call waits
 * 1 ms on a real timer so the sessions interleave. Aggregate events per second, then memory per
 * idle agent: A agents that ran the conversation and sit idle, heap after GC divided by A.
 */
export async function manySessions(options: BenchOptions): Promise<WorkloadResult> {
  const agents = options.quick ? 50 : 1000;
  const replies = buildConversation(1, { deltas: 10, toolCalls: 1 }, 10);
  const scenario = (): Scenario => ({ replies, tool: instantTool, modelDelayMs: 1 });
  options.log(`W5 many sessions: ${agents} concurrent runs`);
  const [warmup, reps] = options.quick ? [0, 1] : [2, 7];
  const { samples, counts } = await interleaved("W5", options.implementations, warmup, reps, async (implementation) => {
    const sinks = Array.from({ length: agents }, () => countingSink());
    if (repIsolation.collectGarbage) collectGarbage();
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(sinks.map(({ sink }) => implementation.run(scenario(), sink)));
    const ms = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const total: EventCounts = {};
    for (const { counts: perAgent } of sinks) {
      assertSameCounts("W5 per agent", sinks[0]!.counts, perAgent, implementation.name);
      for (const type in perAgent) total[type] = (total[type] ?? 0) + perAgent[type]!;
    }
    return { ms, cpuMs: (used.user + used.system) / 1000, counts: total };
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
  ];

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
    note: "rxagent: Agent; reference: pi-agent-core Agent; floor: the transcript array",
  });
  return { id: "W5", title: "many sessions: concurrent agents in one process", rows, targets: [], eventCounts: { [caseName]: counts } };
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
