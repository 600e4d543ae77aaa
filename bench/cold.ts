/**
 * Cold figures: the first reps of a fresh process, for W1 and W2. `coldRuns` starts one child
 * process per implementation and round (`node --expose-gc --import tsx bench/cold.ts <case>
 * <implementation> <from> <reps>`); each child runs `reps` reps of the case with no warm-up and
 * prints them as JSON.
 *
 * Why child processes: in the bench's own process every workload before it has warmed up the
 * JIT, rxjs's classes and the reference's Promises; "the first reps after start" exist only in
 * a process that has run nothing else.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { floor } from "./implementations/floor.js";
import type { Implementation, ImplementationName, Scenario } from "./implementations/implementation.js";
import { reference } from "./implementations/reference.js";
import { loadRxagent } from "./implementations/rxagent.js";
import { scaleSummary, summarize } from "./stats.js";
import { type BenchOptions, collectYoungGarbage, pairRatios, type ResultRow, type TimedRun, timeRun } from "./workloads/harness.js";
import { buildConversation } from "./workloads/replies.js";
import { instantTool } from "./workloads/tools.js";

/** The cases measured cold: the ones the W1 and W2 targets are about. */
export const coldCases = {
  "W1 K=10k": (): Scenario => ({ replies: buildConversation(1, { deltas: 10_000, toolCalls: 0 }), tool: instantTool }),
  "W2 200x8 value": (): Scenario => ({ replies: buildConversation(200, { deltas: 0, toolCalls: 8 }), tool: instantTool }),
};
export type ColdCase = keyof typeof coldCases;

/**
 * `processes` rounds of one fresh process per implementation (the order alternating per round),
 * each running `reps` reps of `coldCase`. Returns the runs per implementation, process by process.
 */
export async function coldRuns(
  coldCase: ColdCase,
  names: readonly ImplementationName[],
  from: "build" | "source",
  processes: number,
  reps: number,
): Promise<Map<ImplementationName, TimedRun[][]>> {
  const runs = new Map<ImplementationName, TimedRun[][]>(names.map((name) => [name, []]));
  for (let round = 0; round < processes; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) runs.get(name)!.push(await child(coldCase, name, from === "build" ? "built" : "source", reps));
  }
  return runs;
}

function child(coldCase: ColdCase, name: ImplementationName, from: "built" | "source", reps: number): Promise<TimedRun[]> {
  const script = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--expose-gc", "--import", "tsx", script, coldCase, name, from, String(reps)], { maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`cold ${coldCase} ${name}: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as TimedRun[]);
    });
  });
}

async function main([coldCase, name, from, reps]: string[]): Promise<void> {
  const scenario = coldCases[coldCase as ColdCase]?.();
  if (!scenario) throw new Error(`unknown cold case ${coldCase}`);
  const implementations: Record<ImplementationName, () => Promise<Implementation>> = {
    rxagent: () => loadRxagent(from === "source" ? "source" : "built"),
    reference: async () => reference,
    floor: async () => floor,
  };
  const implementation = await implementations[name as ImplementationName]();
  const runs: TimedRun[] = [];
  for (let rep = 0; rep < Number(reps); rep++) runs.push(await timeRun(implementation, scenario));
  // GC counted: the garbage the reps left is collected on the last rep's clock (the process ran
  // nothing else, so every collection inside the reps was theirs already).
  const start = performance.now();
  collectYoungGarbage();
  runs[runs.length - 1]!.ms += performance.now() - start;
  process.stdout.write(JSON.stringify(runs));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main(process.argv.slice(2));

/**
 * A table row of a cold case: `reps` first reps of `processes` fresh processes per
 * implementation, scaled by `scale` (milliseconds per run to the row's unit), ratios paired
 * process by process and rep by rep.
 */
export async function coldRow(
  options: BenchOptions,
  coldCase: ColdCase,
  row: Pick<ResultRow, "workload" | "case" | "metric" | "unit">,
  scale: number,
  processes = 3,
  reps = 3,
): Promise<ResultRow> {
  options.log(`${coldCase}: cold, ${processes} fresh processes per implementation x ${reps} reps`);
  const names = options.implementations.map((implementation) => implementation.name);
  const runs = await coldRuns(coldCase, names, options.rxagentFrom ?? "build", processes, reps);
  const flat = new Map([...runs].map(([name, perProcess]) => [name, perProcess.flat()]));
  const values: ResultRow["values"] = {};
  for (const [name, list] of flat) values[name] = scaleSummary(summarize(list.map((run) => run.ms)), scale);
  return { ...row, values, ...pairRatios(flat), note: `first ${reps} reps of ${processes} fresh processes each, no warm-up, GC counted` };
}
