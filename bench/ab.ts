/**
 * `node --expose-gc --import ./bench/typescript-loader.mjs bench/ab.ts [--base REF] [--rounds N] [--only W1,W2v,W2p,W5]`: the
 * working tree's `src/` (head) against `src/` at a git ref (base, default HEAD), and both against
 * the reference, in one process, rounds interleaved (the order alternating). `--base-source DIR`
 * and `--head-source DIR` take a source tree instead (a variant written elsewhere, say).
 *
 * Why one process and not two `npm run bench` runs: on a machine others load, the load moves
 * between runs more than a change moves the figures; within a round the three implementations
 * run back to back under the same load, so head / reference against base / reference, round by
 * round, is what a change did. Each sample is a GC-counted block (`gcCountedBlocks`). W5 adds
 * the heap in flight per waiting session (`waitingBytes`), measured per round for all three.
 * Prints medians over rounds with [lowest–highest], and the load average before and after.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildRxagent } from "./build-rxagent.js";
import type { Implementation, ImplementationName, Scenario } from "./implementations/implementation.js";
import { reference } from "./implementations/reference.js";
import { loadRxagentFrom } from "./implementations/rxagent.js";
import { summarize } from "./stats.js";
import { collectGarbage, countingSink, gcCountedBlocks, timed } from "./workloads/harness.js";
import { waitingBytes } from "./workloads/many-sessions.js";
import { buildConversation } from "./workloads/replies.js";
import { instantTool, resolvedTool } from "./workloads/tools.js";

const benchDirectory = dirname(fileURLToPath(import.meta.url));
const root = join(benchDirectory, "..");
const abDirectory = join(benchDirectory, ".build", "ab");

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

const baseRef = argument("--base", "HEAD");
const rounds = Number(argument("--rounds", "7"));
const only = argument("--only", "W2v,W2p,W5").split(",");
const baseSource = argument("--base-source", "");
const headSource = argument("--head-source", join(root, "src"));

/** The base's `src/` as of `baseRef`, built beside the head's. */
function buildBase(): string {
  if (baseSource !== "") return buildRxagent(baseSource, join(abDirectory, "base", "src"));
  const source = join(abDirectory, "base-source");
  rmSync(source, { recursive: true, force: true });
  mkdirSync(source, { recursive: true });
  const archive = execFileSync("git", ["archive", baseRef, "src"], { cwd: root, maxBuffer: 1 << 28 });
  execFileSync("tar", ["-x", "-C", source], { input: archive });
  return buildRxagent(join(source, "src"), join(abDirectory, "base", "src"));
}

function named(implementation: Implementation, name: string): Implementation {
  return { ...implementation, name: name as ImplementationName };
}

const base = named(await loadRxagentFrom(buildBase()), "base");
const head = named(await loadRxagentFrom(buildRxagent(headSource, join(abDirectory, "head", "src"))), "head");
const implementations = [base, head, reference];
const load = () => loadavg().map((value) => value.toFixed(1)).join(" ");
const format = (values: number[], digits = 3) => {
  const summary = summarize(values);
  return `${summary.median.toFixed(digits)} [${summary.min.toFixed(digits)}–${summary.max.toFixed(digits)}]`;
};
const baseName = baseSource === "" ? `${baseRef} (${execFileSync("git", ["rev-parse", "--short", baseRef], { cwd: root }).toString().trim()})` : baseSource;
console.log(`base ${baseName} vs ${headSource}; ${rounds} rounds; load ${load()}`);

for (const id of only) {
  if (id === "W1" || id === "W2v" || id === "W2p") {
    // W1: one reply of 10k deltas (the bench's K=10k); W2: 200 turns of 8 calls.
    const replies = id === "W1" ? buildConversation(1, { deltas: 10_000, toolCalls: 0 }) : buildConversation(200, { deltas: 0, toolCalls: 8 });
    const units = id === "W1" ? 10_000 : 1600;
    const unit = id === "W1" ? "per delta" : "per tool call";
    const scenario: Scenario = { replies, tool: id === "W2p" ? resolvedTool : instantTool };
    // Warm-up as the bench's: 10 runs each.
    await gcCountedBlocks(`${id} warm-up`, implementations, 1, 10, scenario);
    const samples = await gcCountedBlocks(id, implementations, rounds, 10, scenario);
    const perCall = (name: string) => samples.get(name as ImplementationName)!.map((run) => (run.ms * 1000) / units);
    const cpu = (name: string) => samples.get(name as ImplementationName)!.map((run) => run.cpuMs);
    const ratio = (of: number[], to: number[]) => of.map((value, index) => value / to[index]!);
    const [b, h, r] = [perCall("base"), perCall("head"), perCall("reference")];
    console.log(`${id} ${unit} µs: base ${format(b, 2)}, head ${format(h, 2)}, reference ${format(r, 2)}`);
    console.log(`${id} vs reference (wall): base ${format(ratio(b, r))}x, head ${format(ratio(h, r))}x; head/base ${format(ratio(h, b))}x`);
    console.log(`${id} vs reference (CPU): base ${format(ratio(cpu("base"), cpu("reference")))}x, head ${format(ratio(cpu("head"), cpu("reference")))}x; head/base ${format(ratio(cpu("head"), cpu("base")))}x`);
  } else if (id === "W5") {
    const replies = buildConversation(1, { deltas: 10, toolCalls: 1 }, 10);
    const wall = new Map<string, number[]>(implementations.map((implementation) => [implementation.name, []]));
    const heap = new Map<string, number[]>(implementations.map((implementation) => [implementation.name, []]));
    for (let round = 0; round < rounds + 2; round++) {
      const order = round % 2 === 0 ? implementations : [...implementations].reverse();
      for (const implementation of order) {
        collectGarbage();
        const sinks = Array.from({ length: 1000 }, () => countingSink());
        const run = await timed(() => Promise.all(sinks.map(({ sink }) => implementation.run({ replies, tool: instantTool, modelDelayMs: 1 }, sink))), {});
        if (round >= 2) wall.get(implementation.name)!.push(run.ms);
      }
      if (round >= 2) for (const implementation of order) heap.get(implementation.name)!.push(await waitingBytes(implementation, replies, 1000));
    }
    const ratio = (name: string, to: string) => wall.get(name)!.map((value, index) => value / wall.get(to)![index]!);
    console.log(`W5 wall ms: base ${format(wall.get("base")!, 1)}, head ${format(wall.get("head")!, 1)}, reference ${format(wall.get("reference")!, 1)}`);
    console.log(`W5 wall vs reference: base ${format(ratio("base", "reference"))}x, head ${format(ratio("head", "reference"))}x; head/base ${format(ratio("head", "base"))}x`);
    console.log(`W5 heap per waiting session B: base ${format(heap.get("base")!, 0)}, head ${format(heap.get("head")!, 0)}, reference ${format(heap.get("reference")!, 0)}`);
  } else {
    throw new Error(`Unknown case ${id}; known: W1, W2v, W2p, W5`);
  }
}
console.log(`load at the end: ${load()}`);
