/**
 * `npm run bench`: every workload on rxagent, on @mariozechner/pi-agent-core (the reference:
 * `runAgentLoop`, and for W1, W2 and W5 also `agentLoop`'s EventStream) and on a plain-loop
 * floor, side by side. Prints Markdown tables and writes bench/results/latest.json.
 *
 * Flags: `--quick` (tiny sizes, 1 rep: a smoke run; writes bench/results/quick.json),
 * `--gc-each-rep` (a full GC before each timed rep; writes bench/results/gc-each-rep.json),
 * `--no-cold` (skips W1's and W2's cold figures from fresh processes),
 * `--heap-snapshots` (W4 also reads its state per turn from heap snapshots: exact, slow),
 * `--only W1,W3` (a subset of workloads; writes latest-W1-W3.json), `--from-source` (rxagent from its TypeScript, compiled
 * as it loads, instead of the build; see build-rxagent.ts for why that is not the default).
 * Run through typescript-loader.mjs, not tsx (typescript-hooks.mjs says why).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { floor } from "./implementations/floor.js";
import { reference, referenceEventStream } from "./implementations/reference.js";
import { loadRxagent } from "./build-rxagent.js";
import { type BenchReport, formatMachine, formatTable, formatTargets, machine } from "./report.js";
import { chatty } from "./workloads/chatty.js";
import { eagerTools } from "./workloads/eager-tools.js";
import { type BenchOptions, collectGarbage, repIsolation, type WorkloadResult } from "./workloads/harness.js";
import { longSession } from "./workloads/long-session.js";
import { manySessions } from "./workloads/many-sessions.js";
import { parallelLatency } from "./workloads/parallel-latency.js";
import { redisSessionsWorkload } from "./workloads/redis-sessions.js";
import { toolHeavy } from "./workloads/tool-heavy.js";

const workloads: Record<string, (options: BenchOptions) => Promise<WorkloadResult>> = {
  W1: chatty,
  W2: toolHeavy,
  W3: parallelLatency,
  W4: longSession,
  W5: manySessions,
  W6: eagerTools,
  W7: redisSessionsWorkload,
};

export async function main(argv: readonly string[]): Promise<BenchReport> {
  const quick = argv.includes("--quick");
  repIsolation.collectGarbage = argv.includes("--gc-each-rep");
  const onlyArgument = argv.find((argument) => argument.startsWith("--only"));
  const only = onlyArgument
    ? (onlyArgument.includes("=") ? onlyArgument.split("=")[1]! : argv[argv.indexOf(onlyArgument) + 1] ?? "").split(",")
    : Object.keys(workloads);
  collectGarbage();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const from = argv.includes("--from-source") ? "source" : "build";
  const rxagent = await loadRxagent(from);
  const options: BenchOptions = {
    quick,
    implementations: [rxagent, reference, floor],
    referenceEventStream,
    log,
    heapSnapshots: argv.includes("--heap-snapshots"),
    cold: !quick && !argv.includes("--no-cold") && !repIsolation.collectGarbage,
    rxagentFrom: from,
  };
  const started = performance.now();
  const report: BenchReport = { machine: machine(), quick, rxagentFrom: from, gcEachRep: repIsolation.collectGarbage, durationSeconds: 0, workloads: [], errors: [] };
  for (const id of only) {
    const workload = workloads[id];
    if (!workload) throw new Error(`Unknown workload ${id}; known: ${Object.keys(workloads).join(", ")}`);
    try {
      report.workloads.push(await workload(options));
    } catch (error) {
      // A run whose event counts differ is an error, not a result: report it, keep going.
      report.errors.push({ workload: id, message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      log(`${id} FAILED: ${String(error)}`);
    }
  }
  report.durationSeconds = (performance.now() - started) / 1000;
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = await main(process.argv.slice(2));
  // A subset or the cold-after-GC mode must not overwrite the full run's results.
  const only = process.argv.find((argument) => argument.startsWith("--only"));
  const subset = only ? `-${report.workloads.map((workload) => workload.id).join("-")}` : "";
  const file = report.quick ? "quick.json" : `${repIsolation.collectGarbage ? "gc-each-rep" : "latest"}${subset}.json`;
  const out = join(dirname(fileURLToPath(import.meta.url)), "results", file);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  const targets = report.workloads.flatMap((workload) => workload.targets);
  console.log(`Machine: ${formatMachine(report.machine)}${report.quick ? " (--quick)" : ""}${report.gcEachRep ? " (--gc-each-rep)" : ""}\n`);
  console.log(formatTable(report));
  console.log(`\nTargets\n\n${formatTargets(targets)}`);
  for (const error of report.errors) console.log(`\nERROR in ${error.workload}: ${error.message}`);
  console.log(`\n${report.durationSeconds.toFixed(0)} s; results in ${out}`);
  if (report.errors.length > 0) process.exitCode = 1;
}
