/**
 * Soak: many runs in one process, then the numbers as JSON on stdout. Run with
 * `node --expose-gc --import tsx test/reliability/soak.ts [runs]`; soak.test.ts does and
 * asserts on the output.
 *
 * - Scripted runs (synchronous model, tools, steering, follow-ups, every third run aborted, one
 *   long-lived AbortSignal shared by all): heap after GC sampled every 1,000 runs.
 * - Real-time runs (asyncScheduler timers, Promise tools, tool timeouts, aborts): the active
 *   handles and timers after each run, compared with before.
 */
import { Type } from "@sinclair/typebox";
import { getEventListeners } from "node:events";
import { lastValueFrom, map, type Observable, of, Subject, timer, toArray } from "rxjs";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { checkEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentMessage, AgentToolResult } from "../../src/types.js";
// The scripted runs finish synchronously in virtual time, which TypeBox validation allows once its
// compiler is loaded: loaded up front, as `rxagent/testing` does for its users.
import "../../src/tools/load-typebox-compiler.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");

function heapAfterGc(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

const parameters = Type.Object({ kind: Type.String() });
const echo = defineTool({
  name: "echo",
  description: "answers at once, as a value or an Observable",
  parameters,
  execute: (_id, { kind }): AgentToolResult | Observable<AgentToolResult> => {
    if (kind === "throw") throw new Error("tool failed");
    return kind === "observable" ? of(textResult("from an Observable")) : textResult("a value");
  },
});

/** One scripted run, synchronous from subscribe to agent_end. Returns its grammar problems. */
function scriptedRun(index: number, sharedSignal: AbortSignal): string[] {
  const model = scriptedModel([
    { content: [{ type: "text", text: "calling tools" }, ...["value", "observable", "throw", "nope"].map((kind) => ({ type: "toolCall" as const, name: kind === "nope" ? "nope" : "echo", arguments: { kind } }))] },
    { content: [{ type: "toolCall", name: "echo", arguments: { kind: 42 } }] },
    "all done",
    "after a follow-up",
  ]);
  const steering = new Subject<AgentMessage>();
  const followUps = new Subject<AgentMessage>();
  const controller = new AbortController();
  const onShared = () => controller.abort();
  sharedSignal.addEventListener("abort", onShared, { once: true });
  const events: AgentEvent[] = [];
  agentLoop([{ role: "user", content: `run ${index}`, timestamp: 0 }], { messages: [], tools: [echo] }, {
    model,
    signal: index % 3 === 0 ? controller.signal : sharedSignal,
    steering,
    followUp: followUps,
    maxConcurrency: 2,
  }).subscribe((event) => {
    events.push(event);
    if (event.type === "turn_end" && events.filter((candidate) => candidate.type === "turn_end").length === 1) {
      steering.next({ role: "user", content: "steer", timestamp: 0 });
      followUps.next({ role: "user", content: "follow up", timestamp: 0 });
    }
    if (index % 3 === 0 && event.type === "tool_execution_start") controller.abort();
  });
  sharedSignal.removeEventListener("abort", onShared);
  return checkEventGrammar(events);
}

const sleepy = defineTool({
  name: "sleepy",
  description: "sleeps with a real timer, honouring its signal",
  parameters: Type.Object({ ms: Type.Number() }),
  timeoutMs: 8,
  execute: (_id, { ms }, { signal }) =>
    new Promise<AgentToolResult>((resolve, reject) => {
      const timeout = setTimeout(() => resolve(textResult(`slept ${ms}`)), ms);
      signal.addEventListener("abort", () => {
        clearTimeout(timeout);
        reject(new Error("aborted"));
      }, { once: true });
    }),
});
const ticking = defineTool({
  name: "ticking",
  description: "an Observable on asyncScheduler timers",
  parameters: Type.Object({ ms: Type.Number() }),
  execute: (_id, { ms }) => timer(ms).pipe(map(() => textResult(`ticked ${ms}`))),
});

/** One run in real time; returns the timers and handles it left behind. */
async function realTimeRun(index: number): Promise<{ leftovers: string[]; problems: string[] }> {
  const resourcesBefore = process.getActiveResourcesInfo();
  const model = scriptedModel(
    [
      { content: [{ type: "toolCall", name: "sleepy", arguments: { ms: index % 12 } }, { type: "toolCall", name: "ticking", arguments: { ms: index % 5 } }] },
      "done",
    ],
    { scheduler: undefined, delay: 0 },
  );
  const controller = new AbortController();
  const abortTimer = index % 2 === 0 ? setTimeout(() => controller.abort(), index % 7) : undefined;
  const events = await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [sleepy, ticking] }, { model, signal: controller.signal }).pipe(toArray()));
  clearTimeout(abortTimer);
  await new Promise((resolve) => setImmediate(resolve));
  const resourcesAfter = process.getActiveResourcesInfo();
  // File-system requests belong to the module loader (tsx compiles and caches lazily; seen on
  // Node 24 as FSReqCallback / FSReqPromise, and CloseReq as it closes a cache file), never to
  // the loop, which does no I/O.
  const leftovers = resourcesAfter.filter((name) => !name.startsWith("FSReq") && !name.endsWith("CloseReq"));
  for (const name of resourcesBefore) {
    const at = leftovers.indexOf(name);
    if (at >= 0) leftovers.splice(at, 1);
  }
  return { leftovers, problems: checkEventGrammar(events) };
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 10_000);
  const started = performance.now();
  const sharedSignal = new AbortController().signal;
  const problems: string[] = [];
  for (let index = 0; index < 500; index++) problems.push(...scriptedRun(index, sharedSignal));
  const heapStart = heapAfterGc();
  const samples: number[] = [];
  for (let index = 0; index < runs; index++) {
    problems.push(...scriptedRun(index, sharedSignal));
    if ((index + 1) % 1000 === 0) samples.push(heapAfterGc());
  }
  const heapEnd = heapAfterGc();
  const scriptedMs = performance.now() - started;

  const realTimeRuns = 200;
  const leftovers: string[] = [];
  for (let index = 0; index < realTimeRuns; index++) {
    const result = await realTimeRun(index);
    leftovers.push(...result.leftovers);
    problems.push(...result.problems);
  }
  process.stdout.write(
    `${JSON.stringify({
      scriptedRuns: runs,
      heapStartBytes: heapStart,
      heapEndBytes: heapEnd,
      heapGrowthBytes: heapEnd - heapStart,
      heapGrowthPerRunBytes: (heapEnd - heapStart) / runs,
      heapSamplesBytes: samples,
      sharedSignalListeners: getEventListeners(sharedSignal, "abort").length,
      scriptedMs: Math.round(scriptedMs),
      realTimeRuns,
      realTimeLeftovers: leftovers,
      grammarProblems: problems.slice(0, 10),
      grammarProblemCount: problems.length,
      totalMs: Math.round(performance.now() - started),
    })}\n`,
  );
}

await main();
