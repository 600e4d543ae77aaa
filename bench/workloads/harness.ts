import { PerformanceObserver } from "node:perf_hooks";
import type { BenchEvent, EventSink, Implementation, ImplementationName, Scenario } from "../implementations/implementation.js";
import { pairedRatios, type Summary } from "../stats.js";

/** Options every workload gets from the command line. */
export interface BenchOptions {
  /** Tiny sizes and 1 rep: a smoke run that checks wiring and event counts. */
  quick: boolean;
  implementations: readonly Implementation[];
  log: (line: string) => void;
  /** Also measure W4's state per turn from heap snapshots (exact, but slow). */
  heapSnapshots?: boolean;
  /** Also measure W1 and W2 cold: the first reps of fresh processes (see cold.ts). */
  cold?: boolean;
  /** Where rxagent was loaded from (cold.ts's child processes load the same). */
  rxagentFrom?: "build" | "source";
  /**
   * The reference's `agentLoop` (EventStream) path, run beside its `runAgentLoop` path by the
   * workloads whose targets name both (W1, W2, W5; see `withBothReferencePaths`).
   */
  referenceEventStream?: Implementation;
}

/**
 * `options.implementations` with the reference's EventStream path after its `runAgentLoop` path:
 * for the rows that report rxagent against both of the reference's public paths.
 */
export function withBothReferencePaths(options: BenchOptions): readonly Implementation[] {
  const { implementations, referenceEventStream } = options;
  if (!referenceEventStream) return implementations;
  const after = implementations.findIndex((implementation) => implementation.name === "reference") + 1;
  if (after === 0) return implementations;
  return [...implementations.slice(0, after), referenceEventStream, ...implementations.slice(after)];
}

/** One line of the table: a metric per implementation, and rxagent / reference. */
export interface ResultRow {
  workload: string;
  case: string;
  metric: string;
  unit: string;
  values: Partial<Record<ImplementationName, Summary | null>>;
  /** rxagent / reference wall time, from paired reps. */
  ratio?: Summary;
  /** rxagent / reference process CPU time, from the same pairs (steadier on a loaded machine). */
  cpuRatio?: Summary;
  /** rxagent / the reference's EventStream path (`agentLoop`) wall time, from paired reps, where it ran. */
  eventStreamRatio?: Summary;
  /**
   * rxagent / floor: the distance to a plain loop doing the same. From paired reps for timed rows,
   * else the ratio of the medians. Absent where it means nothing (counts, limits).
   */
  floorRatio?: Summary;
  note?: string;
}

/** A target of the issue, checked against what was measured. */
export interface TargetCheck {
  workload: string;
  target: string;
  measured: string;
  met: boolean;
}

export interface WorkloadResult {
  id: string;
  title: string;
  rows: ResultRow[];
  targets: TargetCheck[];
  /** Event counts by type of one run (identical across implementations). */
  eventCounts: Record<string, Record<string, number>>;
}

export type EventCounts = Record<string, number>;

/** A sink that counts events by type, and the counts. */
export function countingSink(): { sink: EventSink; counts: EventCounts } {
  const counts: EventCounts = {};
  const sink = (event: BenchEvent) => {
    counts[event.type] = (counts[event.type] ?? 0) + 1;
  };
  return { sink, counts };
}

export function totalEvents(counts: EventCounts): number {
  let total = 0;
  for (const type in counts) total += counts[type]!;
  return total;
}

/** Thrown when implementations disagree on event counts: such a run is not a result. */
export class EventCountMismatch extends Error {
  override readonly name = "EventCountMismatch";
}

/** Throws unless `actual` has exactly `expected`'s counts. */
export function assertSameCounts(label: string, expected: EventCounts, actual: EventCounts, who: string): void {
  const types = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  const differences = [...types].filter((type) => expected[type] !== actual[type]);
  if (differences.length > 0) {
    const detail = differences.map((type) => `${type}: expected ${expected[type] ?? 0}, got ${actual[type] ?? 0}`).join("; ");
    throw new EventCountMismatch(`${label}: ${who} emitted different event counts (${detail})`);
  }
}

/**
 * Whether `timeRun` collects garbage before each rep. Off by default: a forced full GC after a
 * rep frees every object of the implementation that ran, V8 then drops the object shapes
 * (maps) nothing uses any more and deoptimizes all code compiled against them, so each rep
 * would measure the JIT warming up again rather than the loop. `--gc-each-rep` turns it on,
 * to show that cold-after-GC case.
 */
export const repIsolation = { collectGarbage: false };

export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("Run with --expose-gc (npm run bench does).");
  gc();
}

const gcEntries: { start: number; end: number }[] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcEntries.push({ start: entry.startTime, end: entry.startTime + entry.duration });
});
gcObserver.observe({ entryTypes: ["gc"] });

/**
 * Milliseconds of garbage collection (main-thread pauses V8 reports) between `start` and `end`
 * (`performance.now()` times). Async: V8 queues gc entries from the collector's epilogue and
 * Node hands them over on the next turn of the event loop.
 */
export async function gcMillisecondsBetween(start: number, end: number): Promise<number> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  for (const entry of gcObserver.takeRecords()) gcEntries.push({ start: entry.startTime, end: entry.startTime + entry.duration });
  let total = 0;
  let kept = 0;
  for (const entry of gcEntries) {
    if (entry.end > start && entry.start < end) total += Math.min(entry.end, end) - Math.max(entry.start, start);
    if (entry.end > end) gcEntries[kept++] = entry;
  }
  gcEntries.length = kept;
  return total;
}

/** Collects the young generation now (see `gcCountedBlocks`). */
export function collectYoungGarbage(): void {
  const gc = (globalThis as { gc?: (options: { type: "minor"; execution: "sync" }) => void }).gc;
  if (!gc) throw new Error("Run with --expose-gc (npm run bench does).");
  gc({ type: "minor", execution: "sync" });
}

/**
 * Per-rep cost with garbage collection counted: `rounds` rounds of one block per implementation
 * (the order alternating), each block `reps` runs back to back, started from an empty young
 * generation and ended, inside the timing, by a scavenge of what the block left. A sample is one
 * block: its time (and CPU time, and GC pauses) over `reps`.
 *
 * Why blocks and not the interleaved reps: between interleaved reps nothing collects garbage, so
 * a collection falls in whichever rep fills the young generation, mostly the rep of the
 * implementation that allocates most, and its cost (which follows what is alive then, not what
 * was allocated) lands on that rep; a median of reps then also leaves out the few reps that
 * collected. Within a block every collection is the block's own. Why not a scavenge after every
 * rep: it charges each rep a collection's fixed cost (0.1 to 1.5 ms measured here, as much as a
 * W1 rep) whatever it allocated; a block pays it once over `reps` runs.
 */
export async function gcCountedBlocks(
  label: string,
  implementations: readonly Implementation[],
  rounds: number,
  reps: number,
  scenario: Scenario,
): Promise<Map<ImplementationName, TimedRun[]>> {
  const { samples } = await interleaved(label, implementations, 0, rounds, async (implementation) => {
    const { sink, counts } = countingSink();
    collectYoungGarbage();
    const block = await timed(async () => {
      for (let rep = 0; rep < reps; rep++) await implementation.run(scenario, sink);
      collectYoungGarbage();
    }, counts);
    for (const type in counts) counts[type]! /= reps;
    return { ...block, ms: block.ms / reps, cpuMs: block.cpuMs / reps, gcMs: block.gcMs / reps };
  });
  return samples;
}

export interface TimedRun {
  /** Wall time. */
  ms: number;
  /** Process CPU time (user + system, all threads, so GC helper threads too). */
  cpuMs: number;
  /** Garbage collection pauses inside `ms` (PerformanceObserver "gc" entries). */
  gcMs: number;
  counts: EventCounts;
}

/** One run (after a full GC with `--gc-each-rep`), timed from the call to `agent_end`, with events counted by type. */
export async function timeRun(implementation: Implementation, scenario: Scenario, onEvent?: EventSink): Promise<TimedRun> {
  const { sink, counts } = countingSink();
  const observe: EventSink = onEvent
    ? (event) => {
        sink(event);
        onEvent(event);
      }
    : sink;
  return timed(() => implementation.run(scenario, observe), counts);
}

/** Times `work` as a rep (see `timeRun`), with the GC pauses inside it. */
export async function timed(work: () => Promise<unknown>, counts: EventCounts): Promise<TimedRun> {
  if (repIsolation.collectGarbage) collectGarbage();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  const end = performance.now();
  const used = process.cpuUsage(cpu);
  return { ms: end - start, cpuMs: (used.user + used.system) / 1000, gcMs: await gcMillisecondsBetween(start, end), counts };
}

/**
 * Runs `warmup` then `reps` rounds of `measure` for each implementation, interleaved (the order
 * alternates each round), and checks every run's event counts against the first one's.
 */
export async function interleaved<T extends { counts: EventCounts }>(
  label: string,
  implementations: readonly Implementation[],
  warmup: number,
  reps: number,
  measure: (implementation: Implementation) => Promise<T>,
): Promise<{ samples: Map<ImplementationName, T[]>; counts: EventCounts }> {
  const samples = new Map<ImplementationName, T[]>(implementations.map((implementation) => [implementation.name, []]));
  let expected: EventCounts | undefined;
  let expectedFrom = "";
  for (let round = 0; round < warmup + reps; round++) {
    const order = round % 2 === 0 ? implementations : [...implementations].reverse();
    for (const implementation of order) {
      const sample = await measure(implementation);
      if (expected === undefined) {
        expected = sample.counts;
        expectedFrom = implementation.name;
      } else {
        assertSameCounts(label, expected, sample.counts, `${implementation.name} (vs ${expectedFrom})`);
      }
      if (round >= warmup) samples.get(implementation.name)!.push(sample);
    }
  }
  return { samples, counts: expected ?? {} };
}

/**
 * rxagent / reference wall-time and CPU-time ratios of paired reps, when both ran, rxagent / the
 * reference's EventStream path, when it ran, and rxagent / floor wall time.
 */
export function pairRatios(samples: Map<ImplementationName, Pick<TimedRun, "ms" | "cpuMs">[]>): Pick<ResultRow, "ratio" | "cpuRatio" | "eventStreamRatio" | "floorRatio"> {
  const rx = samples.get("rxagent");
  const ref = samples.get("reference");
  const eventStream = samples.get("referenceEventStream");
  const floor = samples.get("floor");
  if (!rx) return {};
  const ratios: Pick<ResultRow, "ratio" | "cpuRatio" | "eventStreamRatio" | "floorRatio"> = {};
  if (ref) {
    ratios.ratio = pairedRatios(rx.map((run) => run.ms), ref.map((run) => run.ms));
    ratios.cpuRatio = pairedRatios(rx.map((run) => run.cpuMs), ref.map((run) => run.cpuMs));
  }
  if (eventStream) ratios.eventStreamRatio = pairedRatios(rx.map((run) => run.ms), eventStream.map((run) => run.ms));
  if (floor) ratios.floorRatio = pairedRatios(rx.map((run) => run.ms), floor.map((run) => run.ms));
  return ratios;
}

/** The share of each implementation's rep time spent in garbage collection pauses, as a row. */
export function gcShareRow(row: Pick<ResultRow, "workload" | "case">, samples: Map<ImplementationName, TimedRun[]>): ResultRow {
  const values: ResultRow["values"] = {};
  for (const [name, runs] of samples) {
    const share = (100 * runs.reduce((total, run) => total + run.gcMs, 0)) / runs.reduce((total, run) => total + run.ms, 0);
    values[name] = { median: share, min: share, max: share, n: 1 };
  }
  return { ...row, metric: "GC pauses, share of the time (GC counted)", unit: "%", values, note: "PerformanceObserver gc entries inside the GC-counted blocks" };
}

/** rxagent / floor from the medians of a row's values (for rows not timed rep by rep). */
export function floorRatioOf(values: ResultRow["values"]): Pick<ResultRow, "floorRatio"> {
  const { rxagent, floor } = values;
  if (!rxagent || !floor || floor.median <= 0) return {};
  const ratio = rxagent.median / floor.median;
  return { floorRatio: { median: ratio, min: ratio, max: ratio, n: 1 } };
}

export function pick(implementations: readonly Implementation[], name: ImplementationName): Implementation | undefined {
  return implementations.find((implementation) => implementation.name === name);
}
