/**
 * The README's performance table from several full runs: `node --import tsx bench/median-of-runs.ts
 * run1.json run2.json run3.json` (each a copy of a run's bench/results/latest.json). Each cell is
 * the median of the runs' medians, with the runs' lowest and highest median in brackets; ratios
 * likewise, from each run's own paired ratio. Targets list what each run measured and how many
 * runs met them. Why not pool the reps of all runs: a run's state (load, frequency) moves all its
 * reps together, so runs, not reps, are the independent samples.
 */
import { readFileSync } from "node:fs";
import type { ImplementationName } from "./implementations/implementation.js";
import { type BenchReport, format, formatMachine, header, headerRule } from "./report.js";
import { summarize, type Summary } from "./stats.js";
import type { ResultRow } from "./workloads/harness.js";

const columns: ImplementationName[] = ["rxagent", "reference", "referenceEventStream", "floor"];

function rowKey(row: ResultRow): string {
  return `${row.workload}\u0000${row.case}\u0000${row.metric}`;
}

function acrossRuns(summaries: (Summary | null | undefined)[]): string {
  if (summaries.some((summary) => summary === null)) return "not supported";
  const medians = summaries.filter((summary): summary is Summary => summary !== undefined).map((summary) => summary.median);
  if (medians.length === 0) return "–";
  const across = summarize(medians);
  return across.min === across.max ? format(across.median) : `${format(across.median)} [${format(across.min)}–${format(across.max)}]`;
}

function ratioAcrossRuns(summaries: (Summary | undefined)[]): string {
  const present = summaries.filter((summary): summary is Summary => summary !== undefined);
  if (present.length === 0) return "";
  const across = summarize(present.map((summary) => summary.median));
  return across.min === across.max ? `${format(across.median)}x` : `${format(across.median)}x [${format(across.min)}–${format(across.max)}]`;
}

export function medianOfRuns(reports: readonly BenchReport[]): string {
  const rows = new Map<string, ResultRow[]>();
  for (const report of reports) {
    for (const workload of report.workloads) {
      for (const row of workload.rows) {
        const key = rowKey(row);
        rows.set(key, [...(rows.get(key) ?? []), row]);
      }
    }
  }
  const lines = [
    `Median of ${reports.length} runs (each cell: the median of the runs' medians [lowest–highest run]):`,
    ...reports.map((report, index) => `- run ${index + 1}: ${formatMachine(report.machine)}, ${Math.round(report.durationSeconds)} s`),
    "",
    header,
    headerRule,
  ];
  for (const runs of rows.values()) {
    const first = runs[0]!;
    const unit = first.unit === "" ? "" : ` (${first.unit})`;
    const cells = columns.map((name) => acrossRuns(runs.map((row) => row.values[name])));
    const ratioColumns: ((row: ResultRow) => Summary | undefined)[] = [(row) => row.ratio, (row) => row.cpuRatio, (row) => row.eventStreamRatio, (row) => row.floorRatio];
    const ratios = ratioColumns.map((ratioOf) => ratioAcrossRuns(runs.map(ratioOf)));
    const seenIn = runs.length === reports.length ? "" : ` (in ${runs.length} of ${reports.length} runs)`;
    lines.push(`| ${first.workload} | ${first.case}${seenIn} | ${first.metric}${unit} | ${cells.join(" | ")} | ${ratios.join(" | ")} |`);
  }
  const targets = new Map<string, { measured: string[]; met: number }>();
  for (const report of reports) {
    for (const workload of report.workloads) {
      for (const target of workload.targets) {
        const key = `${target.workload}\u0000${target.target}`;
        const seen = targets.get(key) ?? { measured: [], met: 0 };
        seen.measured.push(target.measured);
        if (target.met) seen.met += 1;
        targets.set(key, seen);
      }
    }
  }
  lines.push("", "| Workload | Target | Measured in each run | Met in |", "|---|---|---|---|");
  for (const [key, seen] of targets) {
    const [workload, target] = key.split("\u0000") as [string, string];
    const met = seen.met === reports.length ? `all ${reports.length}` : seen.met === 0 ? `**none of ${reports.length}**` : `**${seen.met} of ${reports.length}**`;
    lines.push(`| ${workload} | ${target} | ${seen.measured.join("; ")} | ${met} |`);
  }
  return lines.join("\n");
}

const paths = process.argv.slice(2);
if (paths.length === 0) {
  process.stderr.write("usage: node --import tsx bench/median-of-runs.ts run1.json run2.json …\n");
  process.exit(2);
}
process.stdout.write(`${medianOfRuns(paths.map((path) => JSON.parse(readFileSync(path, "utf8")) as BenchReport))}\n`);
