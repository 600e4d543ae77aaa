/**
 * Cold figures: the first run of a fresh process, and its first reps, for W1 and W2. `coldRuns`
 * starts one child process per implementation and round (`node --expose-gc --import tsx
 * bench/cold.ts <case> <implementation> <from> <reps>`); each child loads its implementation
 * (outside the timing, as a program has imported its library before its first run), runs `reps`
 * reps of the case with no warm-up and prints them as JSON.
 *
 * Why child processes: in the bench's own process every workload before it has warmed up the
 * JIT, rxjs's classes and the reference's Promises; "the first reps after start" exist only in
 * a process that has run nothing else.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { floor } from "./implementations/floor.js";
import type { Implementation, ImplementationName, Scenario } from "./implementations/implementation.js";
import { reference, referenceEventStream } from "./implementations/reference.js";
import { loadRxagent } from "./implementations/rxagent.js";
import { scaleSummary, summarize } from "./stats.js";
import { type BenchOptions, collectYoungGarbage, pairRatios, type ResultRow, type TimedRun, timeRun } from "./workloads/harness.js";
import { buildConversation } from "./workloads/replies.js";
import { instantTool, resolvedTool } from "./workloads/tools.js";

/** The cases measured cold: the ones the W1 and W2 targets are about. */
export const coldCases = {
  "W1 K=10k": (): Scenario => ({ replies: buildConversation(1, { deltas: 10_000, toolCalls: 0 }), tool: instantTool }),
  "W2 200x8 value": (): Scenario => ({ replies: buildConversation(200, { deltas: 0, toolCalls: 8 }), tool: instantTool }),
  "W2 200x8 Promise": (): Scenario => ({ replies: buildConversation(200, { deltas: 0, toolCalls: 8 }), tool: resolvedTool }),
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
    referenceEventStream: async () => referenceEventStream,
    floor: async () => floor,
  };
  const implementation = await implementations[name as ImplementationName]();
  const runs: TimedRun[] = [];
  for (let rep = 0; rep < Number(reps); rep++) {
    const run = await timeRun(implementation, scenario);
    // GC counted: the garbage each rep left is collected on its own clock (the process ran
    // nothing else, so every collection inside a rep was that rep's already), so the first run
    // carries its own garbage and none of the next reps'.
    const start = performance.now();
    collectYoungGarbage();
    run.ms += performance.now() - start;
    runs.push(run);
  }
  process.stdout.write(JSON.stringify(runs));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main(process.argv.slice(2));

/**
 * The table rows of a cold case, from `processes` fresh processes per implementation each running
 * `reps` reps, scaled by `scale` (milliseconds per run to the rows' unit): the first run of each
 * process (what a CLI, a serverless function or a test pays), and all `reps` reps pooled. Ratios
 * are paired process by process (and rep by rep).
 */
export async function coldRows(
  options: BenchOptions,
  implementations: readonly Implementation[],
  coldCase: ColdCase,
  row: Pick<ResultRow, "workload" | "case" | "unit">,
  scale: number,
  processes = 5,
  reps = 3,
): Promise<{ first: ResultRow; pooled: ResultRow }> {
  options.log(`${coldCase}: cold, ${processes} fresh processes per implementation x ${reps} reps`);
  const names = implementations.map((implementation) => implementation.name);
  const runs = await coldRuns(coldCase, names, options.rxagentFrom ?? "build", processes, reps);
  const rowOf = (pick: (perProcess: TimedRun[][]) => TimedRun[], metric: string, note: string): ResultRow => {
    const picked = new Map([...runs].map(([name, perProcess]) => [name, pick(perProcess)]));
    const values: ResultRow["values"] = {};
    for (const [name, list] of picked) values[name] = scaleSummary(summarize(list.map((run) => run.ms)), scale);
    return { ...row, metric, values, ...pairRatios(picked), note };
  };
  return {
    first: rowOf((perProcess) => perProcess.map((process) => process[0]!), "first run of a fresh process", `the first run of ${processes} fresh processes each (loading outside the timing), GC counted`),
    pooled: rowOf((perProcess) => perProcess.flat(), `first ${reps} runs, cold`, `first ${reps} reps of ${processes} fresh processes each, no warm-up, GC counted`),
  };
}
