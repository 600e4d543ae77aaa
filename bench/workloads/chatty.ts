import { point, scaleSummary, summarize, type Summary } from "../stats.js";
import { coldRows } from "../cold.js";
import {
  type BenchOptions,
  gcCountedBlocks,
  gcShareRow,
  interleaved,
  pairRatios,
  type ResultRow,
  type TargetCheck,
  timeRun,
  totalEvents,
  withBothReferencePaths,
  type WorkloadResult,
} from "./harness.js";
import { buildConversation } from "./replies.js";
import { instantTool } from "./tools.js";
import type { ImplementationName } from "../implementations/implementation.js";

/**
 * W1 chatty: one reply of K text deltas. Per-event cost, and how it grows from K = 10k to 100k.
 */
export async function chatty(options: BenchOptions): Promise<WorkloadResult> {
  const sizes = options.quick ? [500, 5_000] : [10_000, 100_000];
  const rows: ResultRow[] = [];
  const eventCounts: WorkloadResult["eventCounts"] = {};
  const perEvent = new Map<number, Map<ImplementationName, Summary>>();
  const ratios = new Map<number, Summary>();
  let coldRatio: Summary | undefined;
  const implementations = withBothReferencePaths(options);
  for (const [position, deltas] of sizes.entries()) {
    const scenario = { replies: buildConversation(1, { deltas, toolCalls: 0 }), tool: instantTool };
    const label = `K=${deltas / 1000}k`;
    options.log(`W1 chatty ${label}`);
    const [warmup, reps] = options.quick ? [1, 2] : position === 0 ? [5, 15] : [1, 5];
    const { samples, counts } = await interleaved(`W1 ${label}`, implementations, warmup, reps, (implementation) =>
      timeRun(implementation, scenario),
    );
    const events = totalEvents(counts);
    eventCounts[label] = counts;
    const values: ResultRow["values"] = {};
    const bySize = new Map<ImplementationName, Summary>();
    for (const [name, runs] of samples) {
      const summary = scaleSummary(summarize(runs.map((run) => run.ms)), 1e6 / events);
      values[name] = summary;
      bySize.set(name, summary);
    }
    perEvent.set(deltas, bySize);
    const paired = pairRatios(samples);
    if (position !== 0 && paired.ratio) ratios.set(deltas, paired.ratio);
    rows.push({ workload: "W1 chatty", case: label, metric: "per event", unit: "ns", values, ...paired });
    if (position === 0) {
      // GC counted and cold for the first size only: the targets are about it, and the
      // reference's 100k runs take seconds each.
      const counted = await gcCountedBlocks(`W1 ${label} GC counted`, implementations, options.quick ? 1 : 5, options.quick ? 2 : 20, scenario);
      const countedValues: ResultRow["values"] = {};
      for (const [name, runs] of counted) countedValues[name] = scaleSummary(summarize(runs.map((run) => run.ms)), 1e6 / events);
      const countedRatios = pairRatios(counted);
      if (countedRatios.ratio) ratios.set(deltas, countedRatios.ratio);
      rows.push({ workload: "W1 chatty", case: label, metric: "per event, GC counted", unit: "ns", values: countedValues, ...countedRatios, note: "blocks of back-to-back runs, each ending with a scavenge of its garbage" });
      rows.push(gcShareRow({ workload: "W1 chatty", case: label }, counted));
      if (options.cold) {
        const cold = await coldRows(options, implementations, "W1 K=10k", { workload: "W1 chatty", case: label, unit: "ns per event" }, 1e6 / events);
        rows.push(cold.first, cold.pooled);
        if (cold.first.ratio) coldRatio = cold.first.ratio;
      }
    }
  }
  const [small, large] = sizes as [number, number];
  const growth: ResultRow["values"] = {};
  for (const [name, summary] of perEvent.get(large)!) {
    const base = perEvent.get(small)!.get(name)!;
    growth[name] = point(summary.median / base.median);
  }
  rows.push({
    workload: "W1 chatty",
    case: `${large / 1000}k vs ${small / 1000}k`,
    metric: "per-event growth",
    unit: "x",
    values: growth,
    note: "median per-event cost at the large K / at the small K",
  });
  const targets: TargetCheck[] = [];
  const smallRatio = ratios.get(small);
  if (smallRatio) {
    targets.push({
      workload: "W1",
      target: `per-event cost <= 0.25x reference (K=${small / 1000}k, after the default warm-up, GC counted)`,
      measured: `${smallRatio.median.toFixed(3)}x`,
      met: smallRatio.median <= 0.25,
    });
  }
  if (coldRatio) {
    targets.push({
      workload: "W1",
      target: `cold: the first run of a fresh process <= 0.6x the reference's first run (K=${small / 1000}k, runAgentLoop)`,
      measured: `${coldRatio.median.toFixed(3)}x`,
      met: coldRatio.median <= 0.6,
    });
  }
  const rxGrowth = growth.rxagent;
  if (rxGrowth) {
    targets.push({
      workload: "W1",
      target: `per-event cost at K=${large / 1000}k <= 1.5x its cost at K=${small / 1000}k`,
      measured: `${rxGrowth.median.toFixed(2)}x`,
      met: rxGrowth.median <= 1.5,
    });
  }
  return { id: "W1", title: "chatty: one reply of K text deltas", rows, targets, eventCounts };
}
