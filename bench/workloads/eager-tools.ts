import type { BenchEvent, BenchToolResult, Implementation, ToolBody } from "../implementations/implementation.js";
import { sleep } from "../implementations/implementation.js";
import { pairedRatios, summarize } from "../stats.js";
import { assertSameCounts, type BenchOptions, type EventCounts, pick, type ResultRow, type TargetCheck, timeRun, type WorkloadResult } from "./harness.js";
import { buildConversation } from "./replies.js";

const GAP_MS = 250;
const SLOW_MS = 1000;
const QUICK_MS = 50;

/** A slow search first, then quick reads: call 0 sleeps 1000 ms, the others 50 ms (real timers). */
const searchThenReads: ToolBody = async ({ n }): Promise<BenchToolResult> => {
  await sleep(n === 0 ? SLOW_MS : QUICK_MS);
  return { content: [{ type: "text", text: "ok" }], details: undefined };
};

/**
 * W6 eager tools: one reply of 4 tool calls streamed 250 ms apart (the message ends with the
 * last call), the first call taking 1000 ms and the others 50 ms, then a closing reply. Time from
 * the request to the last tool result, for rxagent with `eagerTools`, rxagent without, and the
 * reference (which waits for the whole message: about 750 + 1000 ms). The floor has no streaming
 * model here, so it sits this one out.
 */
export async function eagerTools(options: BenchOptions): Promise<WorkloadResult> {
  const rxagent = pick(options.implementations, "rxagent");
  const reference = pick(options.implementations, "reference");
  if (!rxagent || !reference) throw new Error("W6 needs rxagent and the reference");
  const replies = buildConversation(1, { deltas: 0, toolCalls: 4 });
  const variants: { label: string; implementation: Implementation; eager: boolean }[] = [
    { label: "rxagent eager", implementation: rxagent, eager: true },
    { label: "rxagent not eager", implementation: rxagent, eager: false },
    { label: "reference", implementation: reference, eager: false },
  ];
  const [warmup, reps] = options.quick ? [0, 1] : [1, 5];
  options.log(`W6 eager tools: 4 calls ${GAP_MS} ms apart, ${SLOW_MS}/${QUICK_MS}/${QUICK_MS}/${QUICK_MS} ms`);
  const samples = new Map<string, number[]>(variants.map((variant) => [variant.label, []]));
  let expected: EventCounts | undefined;
  for (let round = 0; round < warmup + reps; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      let lastResult = 0;
      const onEvent = (event: BenchEvent) => {
        if (event.type === "message_end" && (event as { message?: { role?: string } }).message?.role === "toolResult") lastResult = performance.now();
      };
      const started = performance.now();
      const run = await timeRun(variant.implementation, { replies, tool: searchThenReads, toolCallGapMs: GAP_MS, eagerTools: variant.eager }, onEvent);
      if (expected === undefined) expected = run.counts;
      else assertSameCounts("W6", expected, run.counts, variant.label);
      if (round >= warmup) samples.get(variant.label)!.push(lastResult - started);
    }
  }
  const referenceRuns = samples.get("reference")!;
  const rows: ResultRow[] = [];
  for (const label of ["rxagent not eager", "rxagent eager"]) {
    const runs = samples.get(label)!;
    rows.push({
      workload: "W6 eager tools",
      case: `4 calls ${GAP_MS} ms apart, ${label.replace("rxagent ", "")}`,
      metric: "request to last tool result",
      unit: "ms",
      values: { rxagent: summarize(runs), reference: summarize(referenceRuns) },
      ratio: pairedRatios(runs, referenceRuns),
      note: label === "rxagent eager" ? "eagerTools: true" : "no eager option",
    });
  }
  const eagerMedian = summarize(samples.get("rxagent eager")!).median;
  const referenceMedian = summarize(referenceRuns).median;
  const targets: TargetCheck[] = [
    {
      workload: "W6",
      target: "eager ≤ 0.7x reference (request to last tool result)",
      measured: `${eagerMedian.toFixed(0)} ms vs ${referenceMedian.toFixed(0)} ms (${(eagerMedian / referenceMedian).toFixed(2)}x)`,
      met: eagerMedian <= 0.7 * referenceMedian,
    },
  ];
  return { id: "W6", title: "eager tools: 4 calls streamed 250 ms apart", rows, targets, eventCounts: { "4 calls": expected ?? {} } };
}
