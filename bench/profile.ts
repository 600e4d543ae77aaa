/**
 * Where rxagent's time goes in W1, W2 and W5: `node --expose-gc --import ./bench/typescript-loader.mjs bench/profile.ts
 * [W1|W2|W2promise|W2signal|W5 ...]` runs rxagent's side of each workload (W2promise: W2 with tools returning a Promise; W2signal: with tools reading their signal) after a warm-up under V8's CPU profiler
 * (started and stopped around the measured runs only, through `node:inspector`, so start-up
 * and module loading stay out; the inspector's own `dispatch` is left out of the shares), prints
 * self time by function group and the top functions, and
 * writes the profile to bench/results/profiles/<workload>.cpuprofile (open it in Chrome DevTools).
 * `PROFILE_ALLOCATIONS=1` profiles what the runs allocate instead (see `profileAllocations`).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Implementation, Scenario } from "./implementations/implementation.js";
import { loadRxagent } from "./build-rxagent.js";
import { countingSink } from "./workloads/harness.js";
import { buildConversation } from "./workloads/replies.js";
import { instantTool, resolvedTool, signalReadingTool } from "./workloads/tools.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Each profiled workload: what one iteration runs, how many to warm up with and to profile. */
const chatty: Scenario = { replies: buildConversation(1, { deltas: 10_000, toolCalls: 0 }), tool: instantTool };
const toolHeavy: Scenario = { replies: buildConversation(200, { deltas: 0, toolCalls: 8 }), tool: instantTool };
const shortSession = buildConversation(1, { deltas: 10, toolCalls: 1 }, 10);
const workloads: Record<string, { iterations: number; warmup: number; run: (rxagent: Implementation) => Promise<unknown> }> = {
  W1: { iterations: 300, warmup: 20, run: (rxagent) => rxagent.run(chatty, () => {}) },
  W2: { iterations: 200, warmup: 20, run: (rxagent) => rxagent.run(toolHeavy, () => {}) },
  W2promise: { iterations: 200, warmup: 20, run: (rxagent) => rxagent.run({ ...toolHeavy, tool: resolvedTool }, () => {}) },
  W2signal: { iterations: 200, warmup: 20, run: (rxagent) => rxagent.run({ ...toolHeavy, tool: signalReadingTool }, () => {}) },
  W5: {
    iterations: 10,
    warmup: 2,
    run: (rxagent) => Promise.all(Array.from({ length: 1000 }, () => rxagent.run({ replies: shortSession, tool: instantTool, modelDelayMs: 1 }, countingSink().sink))),
  },
};

function post<T>(session: Session, method: string, parameters?: object): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, parameters, (error, result) => (error ? reject(error) : resolve(result as T))));
}

/** Self time by group and the top functions, as lines. */
export function summarize(profile: Profile, top = Number(process.env.PROFILE_TOP ?? 15)): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    // The inspector's own native `dispatch` (the Profiler.stop call making the profile) is not the workload's.
    if (functionName === "dispatch" && url === "") return;
    total += delta;
    const where = url.replace(/^.*node_modules\//, "").replace(/^.*\/bench\/\.build\/src\//, "rxagent/").replace(/^.*\/bench\//, "bench/");
    const key = `${functionName || "(anonymous)"} ${where}${where ? `:${lineNumber + 1}` : ""}`;
    self.set(key, (self.get(key) ?? 0) + delta);
  });
  const groups = new Map<string, number>();
  for (const [key, time] of self) groups.set(groupOf(key), (groups.get(groupOf(key)) ?? 0) + time);
  const percent = (time: number) => `${((100 * time) / total).toFixed(1)}%`;
  return [
    `${(total / 1000).toFixed(0)} ms sampled`,
    ...[...groups].sort((left, right) => right[1] - left[1]).map(([group, time]) => `  ${percent(time)}  ${group}`),
    "top functions (self time):",
    ...[...self].sort((left, right) => right[1] - left[1]).slice(0, top).map(([key, time]) => `  ${percent(time)}  ${key}`),
  ];
}

function groupOf(key: string): string {
  if (key.startsWith("(garbage collector)")) return "garbage collection";
  if (key.startsWith("(idle)")) return "idle (timers)";
  if (key.startsWith("(program)")) return "V8 itself (compiler, runtime)";
  if (key.includes(" rxjs/")) return "rxjs";
  const own = / rxagent\/([a-z-]+)\//.exec(key);
  if (own) return `rxagent src/${own[1]}`;
  if (key.includes(" bench/")) return "bench (model replay, tool, sink)";
  if (key.includes("node:")) return "Node internals (timers, Promises)";
  return "built-ins (Array, Object, …)";
}

interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

/**
 * `PROFILE_ALLOCATIONS=1`: what the measured runs allocate, garbage included (V8's sampling heap
 * profiler, every 512 bytes on average), by function and by call path, per iteration; written to
 * bench/results/profiles/<workload>.heapprofile.
 */
async function profileAllocations(session: Session, name: string, workload: (typeof workloads)[string], rxagent: Implementation, out: string): Promise<void> {
  await post(session, "HeapProfiler.startSampling", { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  for (let index = 0; index < workload.iterations; index++) await workload.run(rxagent);
  const { profile } = await post<{ profile: { head: AllocationNode } }>(session, "HeapProfiler.stopSampling");
  writeFileSync(join(out, `${name}.heapprofile`), JSON.stringify(profile));
  const self = new Map<string, number>();
  const paths = new Map<string, number>();
  let total = 0;
  const visit = (node: AllocationNode, path: string[]): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^.*node_modules\//, "").replace(/^.*\/bench\/\.build\/src\//, "rxagent/").replace(/^.*\/bench\//, "bench/");
    const key = `${functionName || "(anonymous)"} ${where}${where ? `:${lineNumber + 1}` : ""}`;
    const here = [...path, key];
    if (node.selfSize > 0) {
      total += node.selfSize;
      self.set(key, (self.get(key) ?? 0) + node.selfSize);
      const tail = here.slice(-4).reverse().join(" < ");
      paths.set(tail, (paths.get(tail) ?? 0) + node.selfSize);
    }
    for (const child of node.children) visit(child, here);
  };
  visit(profile.head, []);
  const top = Number(process.env.PROFILE_TOP ?? 15);
  const perIteration = (bytes: number): string => `${(bytes / workload.iterations / 1024).toFixed(1)} KB`;
  console.log(`\n${name} (rxagent, ${workload.iterations} runs after ${workload.warmup} warm-up): ${perIteration(total)} allocated per run`);
  console.log("top functions (self):");
  for (const [key, bytes] of [...self].sort((left, right) => right[1] - left[1]).slice(0, top)) console.log(`  ${perIteration(bytes)}  ${key}`);
  console.log("top paths:");
  for (const [key, bytes] of [...paths].sort((left, right) => right[1] - left[1]).slice(0, top)) console.log(`  ${perIteration(bytes)}  ${key}`);
}

async function main(names: string[]): Promise<void> {
  const rxagent = process.env.PROFILE_ENTRY ? await (await import("./implementations/rxagent.js")).loadRxagentFrom(process.env.PROFILE_ENTRY) : await loadRxagent("build");
  const session = new Session();
  session.connect();
  await post(session, "Profiler.enable");
  // 100 µs rather than the default 1 ms: a W1 run lasts about a millisecond.
  await post(session, "Profiler.setSamplingInterval", { interval: 100 });
  const out = join(dirname(fileURLToPath(import.meta.url)), "results", "profiles");
  mkdirSync(out, { recursive: true });
  for (const name of names) {
    const workload = workloads[name];
    if (!workload) throw new Error(`unknown workload ${name}; known: ${Object.keys(workloads).join(", ")}`);
    for (let index = 0; index < workload.warmup; index++) await workload.run(rxagent);
    if (process.env.PROFILE_ALLOCATIONS) {
      await profileAllocations(session, name, workload, rxagent, out);
      continue;
    }
    await post(session, "Profiler.start");
    for (let index = 0; index < workload.iterations; index++) await workload.run(rxagent);
    const { profile } = await post<{ profile: Profile }>(session, "Profiler.stop");
    writeFileSync(join(out, `${name}.cpuprofile`), JSON.stringify(profile));
    console.log(`\n${name} (rxagent, ${workload.iterations} runs after ${workload.warmup} warm-up)`);
    for (const line of summarize(profile)) console.log(line);
  }
  session.disconnect();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main(process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["W1", "W2", "W5"]);
