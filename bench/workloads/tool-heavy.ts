import { scaleSummary, summarize } from "../stats.js";
import { type BenchOptions, interleaved, pairRatios, type ResultRow, type TargetCheck, timeRun, type WorkloadResult } from "./harness.js";
import { buildConversation } from "./replies.js";
import { instantTool, resolvedTool } from "./tools.js";

/**
 * W2 tool-heavy: T turns of 8 instant tool calls, then a closing text reply. Per turn and per
 * tool call cost. Run twice: tools that return a plain value (rxagent's and the floor's cheapest
 * form; the reference always wraps it in a Promise) and tools that return a resolved Promise.
 */
export async function toolHeavy(options: BenchOptions): Promise<WorkloadResult> {
  const turns = options.quick ? 10 : 200;
  const callsPerTurn = 8;
  const replies = buildConversation(turns, { deltas: 0, toolCalls: callsPerTurn });
  const toolCalls = turns * callsPerTurn;
  const rows: ResultRow[] = [];
  const targets: TargetCheck[] = [];
  const eventCounts: WorkloadResult["eventCounts"] = {};
  const cases = [
    { label: "tools return a value", tool: instantTool },
    { label: "tools return a Promise", tool: resolvedTool },
  ];
  for (const { label, tool } of cases) {
    options.log(`W2 tool-heavy ${turns}x${callsPerTurn}, ${label}`);
    const [warmup, reps] = options.quick ? [1, 2] : [10, 20];
    const { samples, counts } = await interleaved(`W2 ${label}`, options.implementations, warmup, reps, (implementation) =>
      timeRun(implementation, { replies, tool }),
    );
    eventCounts[label] = counts;
    const paired = pairRatios(samples);
    const ratio = paired.ratio;
    const perCall: ResultRow["values"] = {};
    const perTurn: ResultRow["values"] = {};
    for (const [name, runs] of samples) {
      const total = summarize(runs.map((run) => run.ms));
      perCall[name] = scaleSummary(total, 1000 / toolCalls);
      perTurn[name] = scaleSummary(total, 1000 / (turns + 1));
    }
    const caseName = `${turns}x${callsPerTurn}, ${label}`;
    rows.push({ workload: "W2 tool-heavy", case: caseName, metric: "per tool call", unit: "µs", values: perCall, ...paired });
    rows.push({ workload: "W2 tool-heavy", case: caseName, metric: "per turn", unit: "µs", values: perTurn, ...paired });
    if (ratio) {
      targets.push({
        workload: "W2",
        target: `per tool call <= 0.5x reference (${label})`,
        measured: `${ratio.median.toFixed(3)}x`,
        met: ratio.median <= 0.5,
      });
    }
  }
  return { id: "W2", title: "tool-heavy: turns of 8 instant tool calls", rows, targets, eventCounts };
}
