/**
 * `npm run bench:partial-json`: what streamed tool-call arguments cost in the assistant-message
 * draft (src/model/assistant-message-draft.ts, src/model/partial-json.ts), beside one
 * `JSON.parse` of the final text (issue 27, item 3).
 *
 * Cases: about 1 MB of arguments (an object with a long string and an array of small records) in 1 KB
 * deltas, and 2 and 4 MB of the same shape (time should grow in proportion); 10,000 small calls
 * (in 16-byte deltas, and each whole in one), and what the event protocol alone asks for the first
 * of those, no parsing (`streamEventsAlone`, in the draft's columns);
 * the adversarial `[[[…` then `1,1,1…` (48 KB) in 1 KB and in 64-byte deltas. Each case runs in a
 * fresh child process (`node --expose-gc --import ./bench/typescript-loader.mjs bench/partial-json.ts <case>`), so one
 * case's garbage and JIT state do not colour the next: the figures are a cold start, as the
 * first long argument of a process is. `--runs N` (default 3) runs each case's child N times and
 * reports medians (the ratio is the median of each run's own ratio), with the lowest and highest
 * in brackets. JSON.parse is timed five times in the child, each after a full GC, and the median
 * taken. CPU ms is the child's CPU time (the draft's compiler threads included), which a loaded
 * machine inflates less than the wall time. Memory is the peak of `heapUsed`
 * sampled after every delta, less the heap before the case, and the child's peak RSS.
 *
 * Not part of `npm run bench`: that one compares three implementations of the whole loop; this
 * measures one function of rxagent's own, which the reference has no counterpart of.
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { getHeapStatistics } from "node:v8";
import { fileURLToPath } from "node:url";
import { AssistantMessageDraft } from "../src/model/assistant-message-draft.js";
import { argumentsOfMegabytes, megabyteArguments, smallCallArguments } from "./streamed-arguments.js";
import { typeScriptLoader } from "./typescript-loader-specifier.js";

const cases = {
  "1 MB in 1 KB deltas": { text: megabyteArguments, delta: 1024 },
  "2 MB in 1 KB deltas": { text: () => argumentsOfMegabytes(2), delta: 1024 },
  "4 MB in 1 KB deltas": { text: () => argumentsOfMegabytes(4), delta: 1024 },
  "10k small calls in 16 B deltas": { text: smallCallArguments, delta: 16, calls: 10_000 },
  // As a provider that sends a small call's arguments in one piece.
  "10k small calls each in one delta": { text: smallCallArguments, delta: 1024, calls: 10_000 },
  // Not the draft: what the event protocol asks for the same stream, parsing aside (streamEventsAlone).
  "10k small calls in 16 B deltas, the events alone (no parsing; in the draft columns)": { text: smallCallArguments, delta: 16, calls: 10_000, eventsAlone: true },
  "48 KB [[[… in 1 KB deltas": { text: adversarialArguments, delta: 1024 },
  "48 KB [[[… in 64 B deltas": { text: adversarialArguments, delta: 64 },
} as const;
type CaseName = keyof typeof cases;

interface CaseResult {
  name: CaseName;
  bytes: number;
  draftMs: number;
  draftCpuMs: number;
  draftPeakHeapMB: number;
  parseMs: number;
  parseCpuMs: number;
  parsePeakHeapMB: number;
  maxRssMB: number;
}



function adversarialArguments(): string {
  return "[".repeat(24_000) + "1,".repeat(12_000);
}

function megabytes(bytes: number): number {
  return Math.round((bytes / (1024 * 1024)) * 10) / 10;
}

function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Streams `calls` tool calls of `text` in `delta`-sized fragments; `sample` after each fragment (`true` where the heap is worth reading). */
function streamIntoDraft(text: string, delta: number, calls: number, sample: (sampleNow: boolean) => void): void {
  const draft = new AssistantMessageDraft({ api: "bench", provider: "bench", model: "bench", timestamp: 0 });
  for (let call = 0; call < calls; call++) {
    const { index } = draft.openToolCall(`call_${call}`, "write_file");
    for (let offset = 0; offset < text.length; offset += delta) {
      draft.appendToolArguments(index, text.slice(offset, offset + delta));
      // Per fragment for one call, per call for many.
      sample(calls === 1 || offset === 0);
    }
    draft.close(index);
  }
}

/**
 * The least the event protocol asks of a draft, parsing aside: per call a `toolcall_start` and a
 * `toolcall_end` (its arguments from one `JSON.parse` of the call's text), per fragment a
 * `toolcall_delta`, each in an array as the draft returns them and each with a partial message of
 * its own (events are immutable snapshots); no partial arguments are parsed. Why: issue 35 asks
 * the draft for 10k small calls within 3x one `JSON.parse` of their text, and this is what the
 * events alone cost next to that parse.
 */
function streamEventsAlone(text: string, delta: number, calls: number, sample: (sampleNow: boolean) => void): void {
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
  const content: object[] = [];
  const partial = () => ({ role: "assistant", content, api: "bench", provider: "bench", model: "bench", usage, stopReason: "toolUse", timestamp: 0 });
  for (let call = 0; call < calls; call++) {
    const index = content.length;
    const id = `call_${call}`;
    content.push({ type: "toolCall", id, name: "write_file", arguments: {} });
    lastEvents = [{ type: "toolcall_start", contentIndex: index, partial: partial() }];
    let received = "";
    for (let offset = 0; offset < text.length; offset += delta) {
      const fragment = text.slice(offset, offset + delta);
      received += fragment;
      lastEvents = [{ type: "toolcall_delta", contentIndex: index, delta: fragment, partial: partial() }];
      sample(calls === 1 || offset === 0);
    }
    const toolCall = { type: "toolCall", id, name: "write_file", arguments: JSON.parse(received) as unknown };
    content[index] = toolCall;
    lastEvents = [{ type: "toolcall_end", contentIndex: index, toolCall, partial: partial() }];
  }
}

/** Where the events go: a store the optimizing compiler cannot prove dead, so they are made. */
let lastEvents: object[] = [];

function runCase(name: CaseName): CaseResult {
  const chosen: { text: () => string; delta: number; calls?: number; eventsAlone?: boolean } = cases[name];
  const { text: makeText, delta } = chosen;
  const calls = chosen.calls ?? 1;
  const stream = chosen.eventsAlone ? streamEventsAlone : streamIntoDraft;
  const text = makeText();
  // Timed without sampling the heap (a sample per fragment costs more than the fragment),
  // then run again for the heap's peak.
  collect();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  stream(text, delta, calls, () => {});
  const draftMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  collect();
  const baseline = getHeapStatistics().used_heap_size;
  let peak = baseline;
  stream(text, delta, calls, (sampleNow) => {
    if (sampleNow) peak = Math.max(peak, getHeapStatistics().used_heap_size);
  });
  const draftPeak = peak - baseline;

  // The parses of the whole text, five times (each after a full GC), for a steadier denominator
  // than one: the first parse's heap figure, the median time.
  const parseWall: number[] = [];
  const parseCpu: number[] = [];
  let parsePeak = 0;
  let parsed: unknown;
  for (let repeat = 0; repeat < PARSE_REPEATS; repeat++) {
    collect();
    const parseBaseline = process.memoryUsage().heapUsed;
    const parseCpuBefore = process.cpuUsage();
    const parseStarted = performance.now();
    for (let call = 0; call < calls; call++) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // The adversarial text is not complete JSON: the parse fails at its end, as a provider's would.
      }
    }
    parseWall.push(performance.now() - parseStarted);
    const spent = process.cpuUsage(parseCpuBefore);
    parseCpu.push((spent.user + spent.system) / 1000);
    if (repeat === 0) parsePeak = process.memoryUsage().heapUsed - parseBaseline;
  }
  const parseMs = middle(parseWall);
  const parseCpuMs = middle(parseCpu);
  void parsed;
  return {
    name,
    bytes: text.length * calls,
    draftMs: Math.round(draftMs * 10) / 10,
    draftCpuMs: Math.round((cpu.user + cpu.system) / 100) / 10,
    draftPeakHeapMB: megabytes(draftPeak),
    parseMs: Math.round(parseMs * 100) / 100,
    parseCpuMs: Math.round(parseCpuMs * 100) / 100,
    parsePeakHeapMB: megabytes(parsePeak),
    maxRssMB: Math.round(process.resourceUsage().maxRSS / 102.4) / 10,
  };
}

const PARSE_REPEATS = 5;

function middle(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 === 1 ? (sorted[(sorted.length - 1) / 2] as number) : ((sorted[sorted.length / 2 - 1] as number) + (sorted[sorted.length / 2] as number)) / 2;
}

/** The median of `values`, with the lowest and highest in brackets when they differ. */
function median(values: readonly number[], digits: number): string {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low === high ? middle(values).toFixed(digits) : `${middle(values).toFixed(digits)} [${low.toFixed(digits)}–${high.toFixed(digits)}]`;
}

function optionValue(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

const requested = process.argv[2]?.startsWith("--") === false ? (process.argv[2] as CaseName) : undefined;
if (requested !== undefined) {
  if (!(requested in cases)) throw new Error(`Unknown case ${requested}; known: ${Object.keys(cases).join(", ")}`);
  process.stdout.write(`${JSON.stringify(runCase(requested))}\n`);
} else {
  const runs = Number(optionValue("--runs") ?? 3);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs wants a whole number of runs, 1 or more; got ${optionValue("--runs")}`);
  const only = optionValue("--cases")?.split(",");
  const script = fileURLToPath(import.meta.url);
  process.stdout.write(`load average before: ${loadavg().map((load) => load.toFixed(2)).join(" ")}; ${runs} runs of each case, medians [lowest–highest]\n\n`);
  process.stdout.write("| case | bytes | draft ms | JSON.parse ms | draft / JSON.parse | draft CPU ms | JSON.parse CPU ms | same, CPU | draft peak heap MB | JSON.parse heap MB | child max RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const name of Object.keys(cases) as CaseName[]) {
    if (only !== undefined && !only.some((part) => name.startsWith(part))) continue;
    const results: CaseResult[] = [];
    for (let run = 0; run < runs; run++) {
      const output = execFileSync(process.execPath, ["--expose-gc", "--import", typeScriptLoader, script, name], { encoding: "utf8" });
      results.push(JSON.parse(output) as CaseResult);
    }
    const of = (pick: (result: CaseResult) => number, digits: number): string => median(results.map(pick), digits);
    process.stdout.write(
      `| ${name} | ${results[0]?.bytes} | ${of((result) => result.draftMs, 1)} | ${of((result) => result.parseMs, 2)} | ${of((result) => result.draftMs / result.parseMs, 1)}x | ${of((result) => result.draftCpuMs, 1)} | ${of((result) => result.parseCpuMs, 2)} | ${of((result) => result.draftCpuMs / Math.max(result.parseCpuMs, 0.01), 1)}x | ${of((result) => result.draftPeakHeapMB, 1)} | ${of((result) => result.parsePeakHeapMB, 1)} | ${of((result) => result.maxRssMB, 1)} |\n`,
    );
  }
  process.stdout.write(`\nload average after: ${loadavg().map((load) => load.toFixed(2)).join(" ")}\n`);
}
