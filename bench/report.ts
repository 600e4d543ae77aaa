import { readFileSync } from "node:fs";
import { availableParallelism, cpus, platform, release } from "node:os";
import type { ImplementationName } from "./implementations/implementation.js";
import type { Summary } from "./stats.js";
import type { ResultRow, TargetCheck, WorkloadResult } from "./workloads/harness.js";

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  platform: string;
  date: string;
}

export interface BenchReport {
  machine: Machine;
  quick: boolean;
  /** `"build"`: src transpiled to JavaScript; `"source"`: TypeScript through tsx. */
  rxagentFrom: "build" | "source";
  /** Whether a full GC ran before each timed rep (`--gc-each-rep`). */
  gcEachRep: boolean;
  durationSeconds: number;
  workloads: WorkloadResult[];
  errors: { workload: string; message: string }[];
}

const columns: ImplementationName[] = ["rxagent", "reference", "referenceEventStream", "floor"];

/**
 * The table's header: "reference" is pi-agent-core's `runAgentLoop` (its fastest path),
 * "reference agentLoop" its EventStream path (W1, W2 and W5 only).
 */
export const header =
  "| Workload | Case | Metric | rxagent | reference (runAgentLoop) | reference agentLoop (EventStream) | floor | rxagent / reference | same, CPU time | rxagent / reference agentLoop | rxagent / floor |";
export const headerRule = "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|";

/** The results as a Markdown table: median [min–max] per implementation, and the paired ratio. */
export function formatTable(report: BenchReport): string {
  const lines = [
    header,
    headerRule,
  ];
  for (const workload of report.workloads) {
    for (const row of workload.rows) lines.push(formatRow(row));
  }
  return lines.join("\n");
}

function formatRow(row: ResultRow): string {
  const unit = row.unit === "" ? "" : ` (${row.unit})`;
  const cells = columns.map((name) => {
    const value = row.values[name];
    if (value === null) return "not supported";
    if (value === undefined) return "–";
    return formatSummary(value);
  });
  const ratio = (summary: Summary | undefined) => {
    if (!summary) return "";
    return summary.n === 1 ? `${format(summary.median)}x` : `${format(summary.median)}x [${format(summary.min)}–${format(summary.max)}]`;
  };
  return `| ${row.workload} | ${row.case} | ${row.metric}${unit} | ${cells.join(" | ")} | ${ratio(row.ratio)} | ${ratio(row.cpuRatio)} | ${ratio(row.eventStreamRatio)} | ${ratio(row.floorRatio)} |`;
}

function formatSummary(summary: Summary): string {
  if (summary.n === 1 || summary.min === summary.max) return format(summary.median);
  return `${format(summary.median)} [${format(summary.min)}–${format(summary.max)}]`;
}

/** Three significant digits, no exponent; integers above 1000 as they are. */
export function format(value: number): string {
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString("en-US");
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  if (magnitude >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

export function formatTargets(targets: TargetCheck[]): string {
  const lines = ["| Workload | Target | Measured | Met |", "|---|---|---|---|"];
  for (const target of targets) lines.push(`| ${target.workload} | ${target.target} | ${target.measured} | ${target.met ? "yes" : "**no**"} |`);
  return lines.join("\n");
}

export function formatMachine(machine: Machine): string {
  return `${machine.cpu}, ${machine.cores} cores (nproc), Node ${machine.node}, ${machine.platform}, ${machine.date}`;
}

/** The machine the bench runs on. */
export function machine(): Machine {
  let cpu = cpus()[0]?.model ?? "unknown CPU";
  try {
    cpu = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpu;
  } catch {
    // Not Linux: os.cpus() is good enough.
  }
  return {
    cpu,
    cores: availableParallelism(),
    node: process.version,
    platform: `${platform()} ${release()}`,
    date: new Date().toISOString().slice(0, 10),
  };
}
