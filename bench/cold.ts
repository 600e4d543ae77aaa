/**
 * Cold figures: the first run of a fresh process, and its first reps, for W1 and W2. `coldRuns`
 * starts one child process per implementation and round (cold-child.ts); each child loads its
 * implementation (outside the timing, as a program has imported its library before its first
 * run), runs `reps` reps of the case with no warm-up and prints them as JSON.
 *
 * Why child processes: in the bench's own process every workload before it has warmed up the
 * JIT, rxjs's classes and the reference's Promises; "the first reps after start" exist only in
 * a process that has run nothing else.
 *
 * Why the child is bundled to plain JavaScript (esbuild, packages left external) and run without
 * tsx: tsx's loader hooks run on a worker thread that every module load goes through, a message
 * round trip per module. rxagent loads TypeBox's compiler during its first run (at the first
 * TypeBox schema), so under `--import tsx` that run paid for the hooks too (about 170 ms of a
 * 500 ms first W2 run in a CPU profile at load 20: "dispatch" and idle waiting on the worker),
 * which a program run by plain Node does not. `--from-source` children still run through tsx.
 */
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { builtRxagent } from "./build-rxagent.js";
import type { ColdCase } from "./cold-child.js";
import type { Implementation, ImplementationName } from "./implementations/implementation.js";
import { scaleSummary, summarize } from "./stats.js";
import { type BenchOptions, pairRatios, type ResultRow, type TimedRun } from "./workloads/harness.js";

export type { ColdCase } from "./cold-child.js";

const benchDirectory = dirname(fileURLToPath(import.meta.url));

/** cold-child.ts bundled into one JavaScript file; returns its path. */
function bundleChild(): string {
  const outfile = join(benchDirectory, ".build", "cold-child.mjs");
  buildSync({ entryPoints: [join(benchDirectory, "cold-child.ts")], outfile, bundle: true, platform: "node", format: "esm", packages: "external", logLevel: "error" });
  return outfile;
}

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
  // The child's script and the rxagent entry it loads.
  const nodeArguments =
    from === "build"
      ? [bundleChild(), builtRxagent()]
      : ["--import", "tsx", join(benchDirectory, "cold-child.ts"), join(benchDirectory, "..", "src", "index.ts")];
  const runs = new Map<ImplementationName, TimedRun[][]>(names.map((name) => [name, []]));
  for (let round = 0; round < processes; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) runs.get(name)!.push(await child(nodeArguments, coldCase, name, reps));
  }
  return runs;
}

/** One child: `node --expose-gc <nodeArguments> <case> <implementation> <reps>`, its runs parsed. */
function child(nodeArguments: readonly string[], coldCase: ColdCase, name: ImplementationName, reps: number): Promise<TimedRun[]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--expose-gc", ...nodeArguments, coldCase, name, String(reps)], { maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`cold ${coldCase} ${name}: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as TimedRun[]);
    });
  });
}

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
