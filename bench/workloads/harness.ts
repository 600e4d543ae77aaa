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

export interface TimedRun {
  /** Wall time. */
  ms: number;
  /** Process CPU time (user + system, all threads, so GC helper threads too). */
  cpuMs: number;
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
  if (repIsolation.collectGarbage) collectGarbage();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await implementation.run(scenario, observe);
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, counts };
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

/** rxagent / reference wall-time and CPU-time ratios of paired reps, when both ran. */
export function pairRatios(samples: Map<ImplementationName, TimedRun[]>): Pick<ResultRow, "ratio" | "cpuRatio"> {
  const rx = samples.get("rxagent");
  const ref = samples.get("reference");
  if (!rx || !ref) return {};
  return {
    ratio: pairedRatios(rx.map((run) => run.ms), ref.map((run) => run.ms)),
    cpuRatio: pairedRatios(rx.map((run) => run.cpuMs), ref.map((run) => run.cpuMs)),
  };
}

export function pick(implementations: readonly Implementation[], name: ImplementationName): Implementation | undefined {
  return implementations.find((implementation) => implementation.name === name);
}
