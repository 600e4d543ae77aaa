import { type MessageConversion, type Scenario, supportsConversion } from "../implementations/implementation.js";
import { summarize } from "../stats.js";
import type { Message } from "../../src/index.js";
import { type BenchOptions, floorRatioOf, interleaved, pairRatios, type ResultRow, type TargetCheck, timeRun, type WorkloadResult } from "./harness.js";
import { timeTurns } from "./turn-windows.js";
import { buildConversation } from "./replies.js";
import { instantTool } from "./tools.js";

/** The user conversion W4 runs with: a shallow copy of every message, as a rename or a tag would make. */
const copyMessage = (message: Message): Message => ({ ...message });

/**
 * W4 with a user conversion (a shallow copy of every message): over the whole transcript before
 * each model call (`convertToLlm`, all three), and message by message (rxagent's
 * `convertMessageToLlm`, and the floor caching by hand; the reference has no such option).
 * Time per turn over the first and the last `window` turns.
 */
export async function conversionRows(options: BenchOptions, turns: number, window: number): Promise<Pick<WorkloadResult, "rows" | "targets" | "eventCounts">> {
  const replies = buildConversation(turns, { deltas: 50, toolCalls: 1 });
  const rows: ResultRow[] = [];
  const targets: TargetCheck[] = [];
  const eventCounts: WorkloadResult["eventCounts"] = {};
  const cases: { label: string; conversion: MessageConversion }[] = [
    { label: "convertToLlm over the whole transcript", conversion: { mode: "whole", convert: copyMessage } },
    { label: "convertMessageToLlm, each message once", conversion: { mode: "per-message", convert: copyMessage } },
  ];
  for (const { label, conversion } of cases) {
    const scenario: Scenario = { replies, tool: instantTool, conversion };
    const implementations = options.implementations.filter((implementation) => supportsConversion(implementation.name, conversion));
    options.log(`W4 long session ${turns} turns, ${label}`);
    const [warmup, reps] = options.quick ? [0, 1] : [1, 3];
    const { samples, counts } = await interleaved(`W4 ${label}`, implementations, warmup, reps, (implementation) =>
      timeTurns(implementation, window, turns, (onEvent) => timeRun(implementation, scenario, onEvent)),
    );
    const caseName = `${turns} turns, ${label}`;
    eventCounts[caseName] = counts;
    const perTurn: ResultRow["values"] = {};
    const lastWindow: ResultRow["values"] = {};
    const growth: ResultRow["values"] = {};
    for (const [name, runs] of samples) {
      perTurn[name] = summarize(runs.map((run) => (run.ms * 1000) / (turns + 1)));
      lastWindow[name] = summarize(runs.map((run) => (run.last * 1000) / window));
      growth[name] = summarize(runs.map((run) => run.last / run.first));
    }
    if (conversion.mode === "per-message") {
      perTurn.reference = null;
      lastWindow.reference = null;
      growth.reference = null;
    }
    rows.push({ workload: "W4 long session", case: caseName, metric: "per turn", unit: "µs", values: perTurn, ...pairRatios(samples) });
    rows.push({ workload: "W4 long session", case: caseName, metric: `per turn, last ${window}`, unit: "µs", values: lastWindow, ...floorRatioOf(lastWindow) });
    rows.push({ workload: "W4 long session", case: caseName, metric: `last ${window} / first ${window}`, unit: "x", values: growth });
    if (growth.rxagent && conversion.mode === "per-message") {
      targets.push({
        workload: "W4",
        target: `with a user conversion (convertMessageToLlm): last ${window} / first ${window} turn time <= 1.2`,
        measured: `${growth.rxagent.median.toFixed(2)}x`,
        met: growth.rxagent.median <= 1.2,
      });
    }
  }
  return { rows, targets, eventCounts };
}
