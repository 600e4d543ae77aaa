/**
 * One cold process (see cold.ts): `node --expose-gc .build/cold-child.mjs <rxagent index.js>
 * <case> <implementation> <reps>` loads the implementation, runs `reps` reps of the case with no
 * warm-up, each GC counted, and prints them as JSON.
 */
import { fileURLToPath } from "node:url";
import { floor } from "./implementations/floor.js";
import type { Implementation, ImplementationName, Scenario } from "./implementations/implementation.js";
import { reference, referenceEventStream } from "./implementations/reference.js";
import { rxagentAt } from "./implementations/rxagent.js";
import { collectYoungGarbage, type TimedRun, timeRun } from "./workloads/harness.js";
import { buildConversation } from "./workloads/replies.js";
import { instantTool, resolvedTool } from "./workloads/tools.js";

/** The cases measured cold: the ones the W1 and W2 targets are about. */
export const coldCases = {
  "W1 K=10k": (): Scenario => ({ replies: buildConversation(1, { deltas: 10_000, toolCalls: 0 }), tool: instantTool }),
  "W2 200x8 value": (): Scenario => ({ replies: buildConversation(200, { deltas: 0, toolCalls: 8 }), tool: instantTool }),
  "W2 200x8 Promise": (): Scenario => ({ replies: buildConversation(200, { deltas: 0, toolCalls: 8 }), tool: resolvedTool }),
};
export type ColdCase = keyof typeof coldCases;

async function main([rxagentEntry, coldCase, name, reps]: string[]): Promise<void> {
  const scenario = coldCases[coldCase as ColdCase]?.();
  if (!scenario || !rxagentEntry) throw new Error(`usage: cold-child <rxagent index> <case> <implementation> <reps>; unknown case ${coldCase}`);
  const implementations: Record<ImplementationName, () => Promise<Implementation>> = {
    rxagent: () => rxagentAt(rxagentEntry),
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
