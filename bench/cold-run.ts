/**
 * `npm run bench:cold [processes]`: only the cold rows of `npm run bench` (W1 K=10k, W2 200x8 with
 * value and with Promise tools), every implementation in its own fresh processes (default 5 per
 * implementation and case, 3 reps each), with the load average before and after, since the
 * machine's load moves cold figures most. Writes bench/results/cold.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadRxagent } from "./build-rxagent.js";
import { type ColdCase, coldRows } from "./cold.js";
import { floor } from "./implementations/floor.js";
import { reference, referenceEventStream } from "./implementations/reference.js";
import { type BenchReport, formatMachine, formatTable, machine } from "./report.js";
import type { BenchOptions, ResultRow } from "./workloads/harness.js";

const cases: { coldCase: ColdCase; row: Pick<ResultRow, "workload" | "case" | "unit">; scale: number }[] = [
  // Scales: milliseconds per run to ns per event (10,010 agent events) and to µs per tool call (1,600 calls).
  { coldCase: "W1 K=10k", row: { workload: "W1 chatty", case: "K=10k", unit: "ns per event" }, scale: 1e6 / 10_010 },
  { coldCase: "W2 200x8 value", row: { workload: "W2 tool-heavy", case: "200x8, tools return a value", unit: "µs per tool call" }, scale: 1000 / 1600 },
  { coldCase: "W2 200x8 Promise", row: { workload: "W2 tool-heavy", case: "200x8, tools return a Promise", unit: "µs per tool call" }, scale: 1000 / 1600 },
];

const processes = Number(process.argv[2] ?? 5);
const log = (line: string) => process.stderr.write(`${line}\n`);
const load = () => loadavg().map((value) => value.toFixed(1)).join(" ");
const loadBefore = load();
const rxagent = await loadRxagent("build");
const options: BenchOptions = { quick: false, implementations: [rxagent, reference, floor], referenceEventStream, log, cold: true, rxagentFrom: "build" };
const implementations = [rxagent, reference, referenceEventStream, floor];
const started = performance.now();
const rows: ResultRow[] = [];
for (const { coldCase, row, scale } of cases) {
  const { first, pooled } = await coldRows(options, implementations, coldCase, row, scale, processes);
  rows.push(first, pooled);
}
const report: BenchReport & { loadAverage: { before: string; after: string } } = {
  machine: machine(),
  quick: false,
  rxagentFrom: "build",
  gcEachRep: false,
  durationSeconds: (performance.now() - started) / 1000,
  workloads: [{ id: "cold", title: "first runs of fresh processes", rows, targets: [], eventCounts: {} }],
  errors: [],
  loadAverage: { before: loadBefore, after: load() },
};
const out = join(dirname(fileURLToPath(import.meta.url)), "results", "cold.json");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(`${formatMachine(report.machine)}, ${new Date().toISOString().slice(11, 16)} UTC, load average (1, 5, 15 min) ${report.loadAverage.before} before, ${report.loadAverage.after} after, ${report.durationSeconds.toFixed(0)} s\n`);
console.log(formatTable(report));
