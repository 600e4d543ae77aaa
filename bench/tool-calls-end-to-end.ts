/**
 * `npm run bench:tool-calls-e2e`: one reply of N tool calls, streamed and run end to end over the
 * server (issue 35): the model streams the calls, the `Agent` runs them (a tool that answers with
 * a resolved Promise, as an `async` body does), `serveAgents` sends every event as WebSocket
 * frames, and the real client (`connectAgent`) decodes them and keeps its state, as a UI does.
 * The next model call answers "done".
 *
 * Models: `draft` streams the calls through `AssistantMessageDraft` in 16 B deltas, 16 events per
 * turn of the event loop (a provider reading a network chunk); `scripted` is `scriptedModel`,
 * which emits its whole reply at once. Each N runs in a fresh child process with a time limit.
 * Figures: from the prompt to the client's `message_end` of the assistant message (streaming),
 * and to its `agent_end` (every call run and its events received); the child's CPU time and GC
 * pauses; N = 1k, 2k, 4k, 10k, so the growth shows (linear: the time per call stays flat).
 *
 * Usage: `npm run bench:tool-calls-e2e [-- --model draft|scripted] [--calls 1000,2000] [--limit-s 360] [--run-replay full|compact]`
 * (the Agent's `runReplay` option; default full);
 * `--profile` writes CPU profiles of each child to bench/results/profiles/tool-calls-e2e-<model>-<calls>/
 * (one per thread: the TypeScript loader's hooks run in a worker; the largest is the main thread's).
 */
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import { WebSocket } from "ws";
import { Agent } from "../src/agent/agent.js";
import { connectAgent } from "../src/client/index.js";
import { serveAgents } from "../src/server/index.js";
import { scriptedModel } from "../src/testing/scripted-model.js";
import { defineTool } from "../src/tools/define-tool.js";
import { textResult } from "../src/tools/tool-results.js";
import type { Model } from "../src/types.js";
import { smallCallArguments, streamingModel } from "./streamed-arguments.js";
import { typeScriptLoader } from "./typescript-loader-specifier.js";

type ModelKind = "draft" | "scripted";

interface CaseResult {
  model: ModelKind;
  calls: number;
  streamedMs: number;
  endToEndMs: number;
  cpuMs: number;
  gcMs: number;
  clientEvents: number;
  /** Snapshots the client got after the first (a resync: it fell behind). */
  resyncs: number;
}

const DELTA = 16;

/** The first call streams `calls` tool calls through the draft in 16 B deltas; the second answers "done". */
function draftModel(calls: number): Model {
  return streamingModel(smallCallArguments(), DELTA, calls, () => {});
}

function scripted(calls: number): Model {
  const args = JSON.parse(smallCallArguments()) as Record<string, unknown>;
  return scriptedModel([{ content: Array.from({ length: calls }, (_unused, call) => ({ type: "toolCall" as const, id: `call_${call}`, name: "write_file", arguments: args })) }, "done"]);
}

const writeFile = defineTool({
  name: "write_file",
  description: "Writes nothing",
  parameters: Type.Object({ path: Type.String(), line: Type.Number(), replace: Type.String() }),
  execute: () => Promise.resolve(textResult("ok")),
});

async function runCase(model: ModelKind, calls: number): Promise<CaseResult> {
  let gcMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  });
  observer.observe({ entryTypes: ["gc"] });
  const server = await serveAgents({
    port: 0,
    heartbeatIntervalMs: 0,
    createAgent: () => new Agent({ model: model === "draft" ? draftModel(calls) : scripted(calls), tools: [writeFile], runReplay }),
  });
  const client = connectAgent(server.url, { session: "bench", WebSocket });
  await client.ready;
  let streamed = 0;
  let clientEvents = 0;
  let ended: () => void = () => {};
  const agentEnd = new Promise<void>((resolve) => (ended = resolve));
  let started = 0;
  client.events$.subscribe((event) => {
    clientEvents++;
    if (event.type === "message_end" && event.message.role === "assistant" && streamed === 0) streamed = performance.now() - started;
    if (event.type === "agent_end") ended();
  });
  // A client that falls too far behind gets a snapshot instead of the events it missed (the
  // server's backpressure): the run has ended when a snapshot says it no longer streams.
  let snapshots = 0;
  client.frames$.subscribe((frame) => {
    // The attach's snapshot (an empty session) may come after `ready`.
    if (frame.type !== "snapshot" || frame.state.messages.length === 0) return;
    snapshots++;
    if (streamed === 0 && frame.state.streamingMessage === undefined && frame.state.messages.length > 1) streamed = performance.now() - started;
    if (!frame.state.isStreaming) ended();
  });
  (globalThis as { gc?: () => void }).gc?.();
  gcMs = 0;
  started = performance.now();
  const cpuBefore = process.cpuUsage();
  // BENCH_TRACE=1: the server's counters for the client every second, on stderr.
  const trace = process.env.BENCH_TRACE === "1" ? setInterval(() => process.stderr.write(`${Math.round(performance.now() - started)} ms: client at ${clientEvents} events (last seq ${client.lastSeq}), server at seq ${server.session("bench")?.lastSeq} running ${server.session("bench")?.agent.isRunning}, ${JSON.stringify(server.session("bench")?.clients)}\n`), 1000) : undefined;
  await client.prompt("write them");
  await agentEnd;
  const endToEndMs = performance.now() - started;
  clearInterval(trace);
  const cpu = process.cpuUsage(cpuBefore);
  observer.disconnect();
  return { model, calls, streamedMs: Math.round(streamed), endToEndMs: Math.round(endToEndMs), cpuMs: Math.round((cpu.user + cpu.system) / 1000), gcMs: Math.round(gcMs), clientEvents, resyncs: snapshots };
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
}

const runReplay = option("--run-replay") === "compact" ? "compact" : "full";
const child = option("--child");
if (child !== undefined) {
  const [model, calls] = child.split(":") as [ModelKind, string];
  const result = await runCase(model, Number(calls));
  // Exits without closing the server and client (nothing is left to measure).
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
} else {
  const script = fileURLToPath(import.meta.url);
  const model = (option("--model") ?? "draft") as ModelKind;
  if (model !== "draft" && model !== "scripted") throw new Error(`--model: draft or scripted, not ${model}`);
  const counts = (option("--calls") ?? "1000,2000,4000,10000").split(",").map(Number);
  const limitMs = Number(option("--limit-s") ?? "360") * 1000;
  const profile = process.argv.includes("--profile");
  const profiles = fileURLToPath(new URL("./results/profiles/", import.meta.url));
  if (profile) mkdirSync(profiles, { recursive: true });
  process.stdout.write(`model: ${model}; runReplay: ${runReplay}; load average before: ${loadavg().map((load) => load.toFixed(2)).join(" ")}\n\n`);
  process.stdout.write("| calls | streamed ms (client message_end) | end to end ms (client agent_end) | µs per call | CPU ms | GC ms | client events | resyncs |\n|---|---|---|---|---|---|---|---|\n");
  for (const calls of counts) {
    const flags = ["--expose-gc", ...(profile ? ["--cpu-prof", "--cpu-prof-dir", `${profiles}tool-calls-e2e-${model}-${calls}`] : []), "--import", typeScriptLoader];
    const output = await new Promise<string | undefined>((resolve, reject) =>
      execFile(process.execPath, [...flags, script, "--child", `${model}:${calls}`, "--run-replay", runReplay], { encoding: "utf8", timeout: limitMs, maxBuffer: 1 << 20 }, (error, stdout) =>
        error && (error as { killed?: boolean }).killed ? resolve(undefined) : error ? reject(error) : resolve(stdout),
      ),
    );
    if (output === undefined) {
      process.stdout.write(`| ${calls} | | over ${limitMs / 1000} s (stopped) | | | | | |\n`);
      continue;
    }
    const result = JSON.parse(output) as CaseResult;
    process.stdout.write(
      `| ${calls} | ${result.streamedMs} | ${result.endToEndMs} | ${Math.round((result.endToEndMs * 1000) / calls)} | ${result.cpuMs} | ${result.gcMs} | ${result.clientEvents} | ${result.resyncs} |\n`,
    );
  }
  process.stdout.write(`\nload average after: ${loadavg().map((load) => load.toFixed(2)).join(" ")}\n`);
}
