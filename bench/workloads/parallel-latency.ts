import type { ImplementationName } from "../implementations/implementation.js";
import { summarize } from "../stats.js";
import { type BenchOptions, interleaved, pairRatios, type ResultRow, type TargetCheck, timeRun, type WorkloadResult } from "./harness.js";
import { buildConversation } from "./replies.js";
import { type RunningProbe, sleepingTool } from "./tools.js";

/**
 * W3 parallel latency: one reply of N tool calls that each sleep 20 ms on a real timer, then a
 * closing reply. Wall time against the ideal ceil(N / C) x 20 ms, unbounded and with limits,
 * and the most tools seen running at once (which must never exceed the limit).
 */
export async function parallelLatency(options: BenchOptions): Promise<WorkloadResult> {
  const calls = options.quick ? 16 : 64;
  const sleepMs = 20;
  const replies = buildConversation(1, { deltas: 0, toolCalls: calls });
  const rows: ResultRow[] = [];
  const targets: TargetCheck[] = [];
  const eventCounts: WorkloadResult["eventCounts"] = {};
  const overheads = new Map<ImplementationName, number>();
  for (const limit of [undefined, 8, 1]) {
    const label = limit === undefined ? "unbounded" : `limit ${limit}`;
    const implementations = options.implementations.filter((implementation) => limit === undefined || implementation.supportsConcurrencyLimit);
    const ideal = Math.ceil(calls / (limit ?? calls)) * sleepMs;
    const [warmup, reps] = options.quick ? [0, 1] : limit === undefined ? [3, 20] : limit === 8 ? [1, 5] : [0, 3];
    options.log(`W3 parallel latency ${calls} x ${sleepMs} ms, ${label}`);
    const { samples, counts } = await interleaved(`W3 ${label}`, implementations, warmup, reps, async (implementation) => {
      const probe: RunningProbe = { running: 0, maxRunning: 0 };
      const scenario = { replies, tool: sleepingTool(sleepMs, probe), ...(limit === undefined ? {} : { maxConcurrency: limit }) };
      return { ...(await timeRun(implementation, scenario)), maxRunning: probe.maxRunning };
    });
    eventCounts[label] = counts;
    const wall: ResultRow["values"] = {};
    const overhead: ResultRow["values"] = {};
    const running: ResultRow["values"] = {};
    for (const [name, runs] of samples) {
      wall[name] = summarize(runs.map((run) => run.ms));
      overhead[name] = summarize(runs.map((run) => run.ms - ideal));
      running[name] = summarize(runs.map((run) => run.maxRunning));
      if (limit === undefined) overheads.set(name, overhead[name]!.median);
      if (limit !== undefined) {
        const worst = Math.max(...runs.map((run) => run.maxRunning));
        targets.push({
          workload: "W3",
          target: `${name}: never more than ${limit} tools at once`,
          measured: `max ${worst}`,
          met: worst <= limit,
        });
      }
    }
    if (limit !== undefined) wall.reference = null;
    const paired = pairRatios(samples);
    const note = limit === undefined ? undefined : "reference: no concurrency limit option";
    const caseName = `${calls} x ${sleepMs} ms, ${label} (ideal ${ideal} ms)`;
    rows.push({ workload: "W3 parallel", case: caseName, metric: "wall time", unit: "ms", values: wall, ...paired, ...(note ? { note } : {}) });
    rows.push({ workload: "W3 parallel", case: caseName, metric: "overhead over ideal", unit: "ms", values: overhead });
    rows.push({ workload: "W3 parallel", case: caseName, metric: "max tools at once", unit: "", values: running });
    if (limit !== undefined && wall.rxagent) {
      targets.push({
        workload: "W3",
        target: `rxagent ${label}: wall time within 10% of ${ideal} ms`,
        measured: `${wall.rxagent.median.toFixed(1)} ms (${((wall.rxagent.median / ideal - 1) * 100).toFixed(1)}%)`,
        met: wall.rxagent.median <= ideal * 1.1,
      });
    }
  }
  const rxOverhead = overheads.get("rxagent");
  const refOverhead = overheads.get("reference");
  if (rxOverhead !== undefined && refOverhead !== undefined) {
    targets.unshift({
      workload: "W3",
      target: "unbounded: overhead over ideal <= reference's",
      measured: `${rxOverhead.toFixed(2)} ms vs ${refOverhead.toFixed(2)} ms`,
      met: rxOverhead <= refOverhead,
    });
  }
  return { id: "W3", title: "parallel latency: N tools sleeping 20 ms", rows, targets, eventCounts };
}
