import type { Implementation, Scenario } from "../implementations/implementation.js";
import { point, summarize } from "../stats.js";
import { agentSessionRows } from "./agent-session.js";
import { conversionRows } from "./conversion.js";
import { type BenchOptions, collectGarbage, floorRatioOf, interleaved, pairRatios, type ResultRow, type TargetCheck, timeRun, type WorkloadResult } from "./harness.js";
import { liveStateBytes } from "./heap-snapshot.js";
import { timeTurns } from "./turn-windows.js";
import { buildConversation } from "./replies.js";
import { instantTool } from "./tools.js";

/**
 * W4 long session: T turns of 50 text deltas and 1 tool call. Time per turn over the first and
 * the last `window` turns (a loop whose per-turn cost grows with the transcript shows here), and
 * heap after a full GC per turn: the slope of ten readings from turn T/10 to the last tool turn.
 */
export async function longSession(options: BenchOptions): Promise<WorkloadResult> {
  const turns = options.quick ? 200 : 2000;
  const window = options.quick ? 20 : 100;
  const scenario: Scenario = { replies: buildConversation(turns, { deltas: 50, toolCalls: 1 }), tool: instantTool };
  options.log(`W4 long session ${turns} turns`);
  const [warmup, reps] = options.quick ? [0, 1] : [2, 7];
  const { samples, counts } = await interleaved("W4", options.implementations, warmup, reps, (implementation) =>
    timeTurns(implementation, window, turns, (onEvent) => timeRun(implementation, scenario, onEvent)),
  );
  const rows: ResultRow[] = [];
  const perTurn: ResultRow["values"] = {};
  const firstWindow: ResultRow["values"] = {};
  const lastWindow: ResultRow["values"] = {};
  const growth: ResultRow["values"] = {};
  for (const [name, runs] of samples) {
    perTurn[name] = summarize(runs.map((run) => (run.ms * 1000) / (turns + 1)));
    firstWindow[name] = summarize(runs.map((run) => (run.first * 1000) / window));
    lastWindow[name] = summarize(runs.map((run) => (run.last * 1000) / window));
    growth[name] = summarize(runs.map((run) => run.last / run.first));
  }
  const caseName = `${turns} turns x (50 deltas + 1 tool)`;
  rows.push({ workload: "W4 long session", case: caseName, metric: "per turn", unit: "µs", values: perTurn, ...pairRatios(samples) });
  rows.push({ workload: "W4 long session", case: caseName, metric: `per turn, first ${window}`, unit: "µs", values: firstWindow, ...floorRatioOf(firstWindow) });
  rows.push({ workload: "W4 long session", case: caseName, metric: `per turn, last ${window}`, unit: "µs", values: lastWindow, ...floorRatioOf(lastWindow) });
  rows.push({ workload: "W4 long session", case: caseName, metric: `last ${window} / first ${window}`, unit: "x", values: growth });

  options.log("W4 long session: heap per turn");
  const heap: ResultRow["values"] = {};
  for (const implementation of options.implementations) {
    const perTurnBytes: number[] = [];
    for (let rep = 0; rep < (options.quick ? 1 : 7); rep++) {
      // From turn T/10 on: the first turns also allocate compiled code, which is not state.
      perTurnBytes.push(await heapPerTurn(implementation, scenario, turns / 10, turns));
    }
    heap[implementation.name] = summarize(perTurnBytes);
  }
  rows.push({
    workload: "W4 long session",
    case: caseName,
    metric: "heap after GC per turn",
    unit: "bytes",
    values: heap,
    ...floorRatioOf(heap),
    note: `slope of the heap after a full GC at 10 turns from ${turns / 10} to ${turns}`,
  });
  const state: ResultRow["values"] = {};
  if (options.heapSnapshots) {
    options.log("W4 long session: state per turn (heap snapshots)");
    for (const implementation of options.implementations) {
      state[implementation.name] = point(await statePerTurn(implementation, scenario, turns / 2, turns));
    }
    rows.push({
      workload: "W4 long session",
      case: caseName,
      metric: "state per turn, heap snapshots",
      unit: "bytes",
      values: state,
      note: `(live heap but compiled code at turn ${turns} - at turn ${turns / 2}) / ${turns / 2}, one run each`,
    });
  }
  const targets: TargetCheck[] = [];
  if (growth.rxagent) {
    targets.push({
      workload: "W4",
      target: `last ${window} / first ${window} turn time <= 1.2`,
      measured: `${growth.rxagent.median.toFixed(2)}x`,
      met: growth.rxagent.median <= 1.2,
    });
  }
  const notAbove = (target: string, values: ResultRow["values"]) => {
    const { rxagent, reference } = values;
    if (!rxagent || !reference) return;
    const measured = `${rxagent.median.toFixed(0)} B vs ${reference.median.toFixed(0)} B`;
    targets.push({ workload: "W4", target, measured, met: rxagent.median <= reference.median });
  };
  notAbove("heap per turn <= reference's", heap);
  notAbove("state per turn (heap snapshots) <= reference's", state);
  const eventCounts: WorkloadResult["eventCounts"] = { [caseName]: counts };
  for (const extra of [await conversionRows(options, turns, window), await agentSessionRows(options)]) {
    rows.push(...extra.rows);
    targets.push(...extra.targets);
    Object.assign(eventCounts, extra.eventCounts);
  }
  return { id: "W4", title: "long session: turns of 50 deltas and 1 tool call", rows, targets, eventCounts };
}

/**
 * Heap per turn between turn `from` and turn `to`: the least-squares slope of the heap used after
 * a full GC at the end of ten evenly spaced turns. Why a slope over ten readings rather than the
 * difference of two: one reading can be off by a few hundred kilobytes (array backing stores that
 * grew, compiled code the JIT made or dropped), which over a thousand turns is a hundred bytes
 * per turn.
 */
async function heapPerTurn(implementation: Implementation, scenario: Scenario, from: number, to: number): Promise<number> {
  const readingTurns = Array.from({ length: 10 }, (_, step) => Math.round(from + ((to - from) * step) / 9));
  const readings: { turn: number; bytes: number }[] = [];
  let turnEnds = 0;
  await timeRun(implementation, scenario, (event) => {
    if (event.type !== "turn_end") return;
    turnEnds += 1;
    if (!readingTurns.includes(turnEnds)) return;
    collectGarbage();
    readings.push({ turn: turnEnds, bytes: process.memoryUsage().heapUsed });
  });
  return slope(
    readings.map((reading) => reading.turn),
    readings.map((reading) => reading.bytes),
  );
}

function slope(xs: number[], ys: number[]): number {
  const meanX = xs.reduce((sum, x) => sum + x, 0) / xs.length;
  const meanY = ys.reduce((sum, y) => sum + y, 0) / ys.length;
  let covariance = 0;
  let variance = 0;
  for (const [index, x] of xs.entries()) {
    covariance += (x - meanX) * (ys[index]! - meanY);
    variance += (x - meanX) ** 2;
  }
  return covariance / variance;
}

/** Live heap but compiled code (heap snapshots) per turn between turn `from` and turn `to`. */
async function statePerTurn(implementation: Implementation, scenario: Scenario, from: number, to: number): Promise<number> {
  let turnEnds = 0;
  let atFrom = 0;
  let atTo = 0;
  await timeRun(implementation, scenario, (event) => {
    if (event.type !== "turn_end") return;
    turnEnds += 1;
    if (turnEnds === from) atFrom = liveStateBytes();
    if (turnEnds === to) atTo = liveStateBytes();
  });
  return (atTo - atFrom) / (to - from);
}
