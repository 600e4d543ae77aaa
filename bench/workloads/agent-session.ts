import { type MessageConversion, type Scenario, supportsConversion } from "../implementations/implementation.js";
import { summarize } from "../stats.js";
import type { Message } from "../../src/index.js";
import { type BenchOptions, countingSink, floorRatioOf, interleaved, pairRatios, type ResultRow, type TargetCheck, timed, type WorkloadResult } from "./harness.js";
import { timeTurns } from "./turn-windows.js";
import { buildConversation } from "./replies.js";
import { instantTool } from "./tools.js";

/**
 * W4 through the agent class: one `Agent` (the reference's `Agent`; the floor keeps a transcript)
 * given P prompts one after the other, each a 5-turn conversation (4 turns of 10 deltas + 1 tool
 * call, then 3 deltas), so 5P turns in all; time per turn over the first and the last tenth. With the
 * default conversion and with `convertMessageToLlm` (a shallow copy of each message). What a
 * prompt costs beyond the loop (the agent's state, a new run over the whole transcript) shows
 * here and not in the loop-level rows.
 */
export async function agentSessionRows(options: BenchOptions): Promise<Pick<WorkloadResult, "rows" | "targets" | "eventCounts">> {
  const prompts = options.quick ? 40 : 2000;
  const turnsPerPrompt = 5;
  const turns = prompts * turnsPerPrompt;
  const window = turns / 10;
  const replies = buildConversation(turnsPerPrompt - 1, { deltas: 10, toolCalls: 1 });
  const rows: ResultRow[] = [];
  const targets: TargetCheck[] = [];
  const eventCounts: WorkloadResult["eventCounts"] = {};
  const cases: { label: string; conversion?: MessageConversion }[] = [
    { label: "default conversion" },
    { label: "convertMessageToLlm", conversion: { mode: "per-message", convert: (message: Message): Message => ({ ...message }) } },
  ];
  for (const { label, conversion } of cases) {
    const scenario: Scenario = { replies, tool: instantTool, ...(conversion ? { conversion } : {}) };
    const implementations = options.implementations.filter((implementation) => supportsConversion(implementation.name, conversion));
    options.log(`W4 agent session: ${prompts} prompts (${turns} turns), ${label}`);
    // One rep: the run is its own warm-up (the first tenth), and the reference's agent costs more
    // per turn as the session grows, so its total grows faster than the turns (see bench/README.md).
    const [warmup, reps] = [0, 1];
    const { samples, counts } = await interleaved(`W4 agent ${label}`, implementations, warmup, reps, (implementation) =>
      timeTurns(implementation, window, turns, (onEvent) => {
        const { sink, counts: runCounts } = countingSink();
        return timed(
          () =>
            implementation.agentSession(scenario, prompts, (event) => {
              sink(event);
              onEvent(event);
            }),
          runCounts,
        );
      }),
    );
    const caseName = `Agent, ${prompts} prompts x ${turnsPerPrompt} turns, ${label}`;
    eventCounts[caseName] = counts;
    const perTurn: ResultRow["values"] = {};
    const firstWindow: ResultRow["values"] = {};
    const lastWindow: ResultRow["values"] = {};
    const growth: ResultRow["values"] = {};
    for (const [name, runs] of samples) {
      perTurn[name] = summarize(runs.map((run) => (run.ms * 1000) / turns));
      firstWindow[name] = summarize(runs.map((run) => (run.first * 1000) / window));
      lastWindow[name] = summarize(runs.map((run) => (run.last * 1000) / window));
      growth[name] = summarize(runs.map((run) => run.last / run.first));
    }
    if (conversion) {
      for (const values of [perTurn, firstWindow, lastWindow, growth]) values.reference = null;
    }
    rows.push({ workload: "W4 long session", case: caseName, metric: "per turn", unit: "µs", values: perTurn, ...pairRatios(samples) });
    rows.push({ workload: "W4 long session", case: caseName, metric: `per turn, first ${window}`, unit: "µs", values: firstWindow, ...floorRatioOf(firstWindow) });
    rows.push({ workload: "W4 long session", case: caseName, metric: `per turn, last ${window}`, unit: "µs", values: lastWindow, ...floorRatioOf(lastWindow) });
    rows.push({ workload: "W4 long session", case: caseName, metric: `last ${window} / first ${window}`, unit: "x", values: growth });
    if (growth.rxagent) {
      targets.push({
        workload: "W4",
        target: `Agent over ${turns} turns (${label}): last ${window} / first ${window} turn time <= 1.2`,
        measured: `${growth.rxagent.median.toFixed(2)}x`,
        met: growth.rxagent.median <= 1.2,
      });
    }
  }
  return { rows, targets, eventCounts };
}
