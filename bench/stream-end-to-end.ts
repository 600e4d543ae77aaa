/**
 * `npm run bench:stream-e2e`: streamed tool-call arguments end to end (issue 35, item 4): a
 * model streams them through `AssistantMessageDraft`, the loop and the `Agent` pass them on, and
 * `serveAgents` sends them as WebSocket frames to a client, which parses every frame (as any
 * client must) and keeps nothing.
 *
 * Cases: about 1 MB of arguments (the same text as `bench:partial-json`) in 1 KB deltas; 10,000
 * small calls in one reply, in 16-byte deltas. The model hands the loop 16 events per turn of
 * the event loop (a provider reads many from each network chunk), so the socket drains as it
 * would. Each case runs in a fresh child process. Memory: `heapUsed` sampled every 2 ms and at
 * every batch, peak less the heap before the prompt (after a full GC; the peak counts garbage not
 * yet collected), and what stays after a full GC once the message has arrived; the child's peak
 * RSS less its RSS before. Time: from the prompt to the client's `message_end` of the assistant's
 * message (running the calls is not streaming), beside one `JSON.parse` of the arguments in the
 * same child.
 *
 * What the heap holds at its peak is partly by design: the server's resume log keeps the frames
 * of the run (up to 8 MiB of JSON, `EventLogOptions.maxBytes`), and the transcript keeps the
 * final message; the case with a 64 KiB log shows the rest.
 *
 * Usage: `npm run bench:stream-e2e [-- --protocol 2|3] [--split] [--semi-space MB] [--case <name>] [--run-replay full|compact]`.
 * `--protocol 2` serves protocol 2 (the arguments re-sent as they are re-parsed); the default is the
 * server's, protocol 3 (arguments derived from their text). `--split` runs
 * the client (`connectAgent`, which rebuilds every event and keeps the state, as a UI does) in a
 * process of its own, so each side's heap is measured alone: server and client columns. One
 * process's peak counts the young generation's garbage not yet collected, up to the semi-space's
 * size (16 MiB by default in Node 20, more than 4x a 1 MB argument by itself); `--semi-space 1`
 * gives the children `--max-semi-space-size=1`, so the peak is nearer what is live.
 * `BENCH_HEAP_SNAPSHOT=<file>` with `--split` writes the server's heap before the prompt
 * (`<file>.before`) and where it is measured, to see what it holds; `BENCH_ALLOCATION_PROFILE=<file>`
 * with `--split` writes what the server allocated over the same span (garbage included) as a
 * `.heapprofile`.
 */
import { execFileSync, spawn } from "node:child_process";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";
import { getHeapStatistics, writeHeapSnapshot } from "node:v8";
import { first, Subscription } from "rxjs";
import { WebSocket } from "ws";
import type { AgentEvent } from "../src/types.js";
import { Agent } from "../src/agent/agent.js";
import { connectAgent } from "../src/client/index.js";
import { serveAgents } from "../src/server/index.js";
import { PROTOCOL_3_SUBPROTOCOL, PROTOCOL_VERSION } from "../src/protocol/protocol-version.js";
import { megabyteArguments, smallCallArguments, streamingModel } from "./streamed-arguments.js";
import { typeScriptLoader } from "./typescript-loader-specifier.js";

/** Milliseconds to `JSON.parse` the final text of every call once: what end to end is set against. */
function parseTime(text: string, calls: number): number {
  const started = performance.now();
  for (let call = 0; call < calls; call++) JSON.parse(text);
  return performance.now() - started;
}

const cases = {
  "1 MB in 1 KB deltas": { text: megabyteArguments, delta: 1024, calls: 1 },
  "1 MB in 1 KB deltas, 64 KiB resume log": { text: megabyteArguments, delta: 1024, calls: 1, logBytes: 64 * 1024 },
  // Two sizes: time and memory should grow in proportion to the call count.
  "2.5k small calls in 16 B deltas": { text: smallCallArguments, delta: 16, calls: 2_500 },
  "10k small calls in 16 B deltas": { text: smallCallArguments, delta: 16, calls: 10_000 },
} as const;
type CaseName = keyof typeof cases;

interface CaseResult {
  name: CaseName;
  argumentBytes: number;
  endToEndMs: number;
  parseMs: number;
  peakHeapMB: number;
  retainedHeapMB: number;
  rssGrowthMB: number;
  frameMB: number;
  /** With `--split`: the client process's own figures (the columns above are then the server's alone). */
  client?: ClientResult;
}

interface ClientResult {
  endToEndMs: number;
  peakHeapMB: number;
  retainedHeapMB: number;
  rssGrowthMB: number;
}

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? undefined : process.argv[index + 1];
}

/** The protocol served: the server's default (3) unless `--protocol 2`. */
const protocol = flag("protocol") === "2" ? 2 : PROTOCOL_VERSION;
const split = process.argv.includes("--split");
const runReplay = flag("run-replay") === "compact" ? "compact" : "full";

function megabytes(bytes: number): number {
  return Math.round((bytes / (1024 * 1024)) * 10) / 10;
}

/**
 * The heap in use, as `process.memoryUsage().heapUsed` reads it. Why not that: it reads the RSS
 * from /proc as well, 13 µs a call here against 0.3, and the client samples at every event: 60,000
 * samples were 0.8 s of the 10k small calls' end-to-end time (a CPU profile: 35% of the client's).
 */
function heapUsed(): number {
  return getHeapStatistics().used_heap_size;
}

function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function runCase(name: CaseName): Promise<CaseResult> {
  const chosen: { text: () => string; delta: number; calls: number; logBytes?: number } = cases[name];
  const { text: makeText, delta, calls } = chosen;
  // Flat before the heap is measured: the first slice of a concatenated string flattens it, a
  // megabyte the figures would count as the server's.
  const text = JSON.parse(JSON.stringify(makeText())) as string;
  let agent: Agent | undefined;
  let peak = 0;
  const sample = (): void => {
    peak = Math.max(peak, heapUsed());
  };
  const server = await serveAgents({
    port: 0,
    protocol,
    createAgent: () => (agent = new Agent({ model: streamingModel(text, delta, calls, sample), runReplay })),
    ...(chosen.logBytes === undefined ? {} : { eventLog: { maxBytes: chosen.logBytes } }),
  });
  if (split) return runSplit(name, text, calls, server, () => agent, () => peak, (value) => (peak = value), sample);
  // Offered as connectAgent does: a socket that did not would get protocol 2, rewritten for it.
  const socket = new WebSocket(server.url, [PROTOCOL_3_SUBPROTOCOL]);
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  let frameBytes = 0;
  let ended: () => void = () => {};
  const agentEnd = new Promise<void>((resolve) => (ended = resolve));
  // A frame past the server's size limit comes in fragments, as the protocol's clients read them.
  const fragments: string[] = [];
  socket.on("message", (data) => {
    const text = String(data);
    frameBytes += text.length;
    let frame = JSON.parse(text) as { type: string; event?: { type?: string; message?: { role?: string } }; data?: string; final?: boolean };
    if (frame.type === "fragment") {
      fragments.push(frame.data ?? "");
      if (frame.final !== true) return;
      frame = JSON.parse(fragments.splice(0).join("")) as typeof frame;
    }
    // The assistant's message has crossed the wire: what follows (running the calls) is not
    // streaming. In protocol 3 its end is an `end` frame (only a streamed message has one).
    if (frame.type === "end" || (frame.type === "event" && frame.event?.type === "message_end" && frame.event.message?.role === "assistant")) ended();
  });
  socket.send(JSON.stringify({ id: "a", type: "attach", session: "bench" }));
  await new Promise((resolve) => setTimeout(resolve, 50));
  collect();
  const heapBefore = heapUsed();
  const rssBefore = process.memoryUsage().rss;
  peak = heapBefore;
  const interval = setInterval(sample, 2);
  const started = performance.now();
  socket.send(JSON.stringify({ id: "p", type: "prompt", input: "write it" }));
  await agentEnd;
  const endToEndMs = performance.now() - started;
  clearInterval(interval);
  const maxRss = process.resourceUsage().maxRSS * 1024;
  collect();
  const retained = heapUsed() - heapBefore;
  socket.close();

  const parseMs = parseTime(text, calls);
  return {
    name,
    argumentBytes: text.length * calls,
    endToEndMs: Math.round(endToEndMs),
    parseMs: Math.round(parseMs * 100) / 100,
    peakHeapMB: megabytes(peak - heapBefore),
    retainedHeapMB: megabytes(retained),
    rssGrowthMB: megabytes(Math.max(0, maxRss - rssBefore)),
    frameMB: megabytes(frameBytes),
  };
}

/**
 * The server's side of `--split`: a client process attaches, waits for the word, prompts and
 * reports its own figures once the assistant's message has arrived; this process measures the
 * server's heap over the same span.
 */
async function runSplit(
  name: CaseName,
  text: string,
  calls: number,
  server: Awaited<ReturnType<typeof serveAgents>>,
  agentOf: () => Agent | undefined,
  peakNow: () => number,
  setPeak: (value: number) => void,
  sample: () => void,
): Promise<CaseResult> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [...process.execArgv, script, "--client-of", server.url], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  await lines.next(); // "attached"
  collect();
  if (process.env.BENCH_HEAP_SNAPSHOT) writeHeapSnapshot(`${process.env.BENCH_HEAP_SNAPSHOT}.before`);
  collect();
  const heapBefore = heapUsed();
  const rssBefore = process.memoryUsage().rss;
  setPeak(heapBefore);
  const profiler = process.env.BENCH_ALLOCATION_PROFILE ? startAllocationSampling() : undefined;
  const interval = setInterval(sample, 2);
  // The server's side ends when it has published the assistant's message_end: measured there, in
  // the run's own emission (after the agent's replay of the run has taken the event), before the
  // calls run (their events carry the arguments again).
  let measured: { peak: number; maxRss: number; retained: number; frameBytes: number } | undefined;
  const subscription = new Subscription();
  const measure = (event: AgentEvent): void => {
    if (measured !== undefined || event.type !== "message_end" || event.message.role !== "assistant") return;
    clearInterval(interval);
    sample();
    const peak = peakNow();
    const maxRss = process.resourceUsage().maxRSS * 1024;
    if (profiler !== undefined) stopAllocationSampling(profiler, process.env.BENCH_ALLOCATION_PROFILE as string);
    collect();
    if (process.env.BENCH_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT);
    const stats = server.session("bench")?.clients[0];
    measured = { peak, maxRss, retained: heapUsed() - heapBefore, frameBytes: (stats?.sentBytes ?? 0) + (stats?.queuedBytes ?? 0) };
  };
  const agent = agentOf();
  if (agent) {
    // At the run's first event, before its replay has it: the run's subscribers hear each event after the replay took it.
    subscription.add(agent.events$.pipe(first((event) => event.type === "agent_start")).subscribe(() => subscription.add(agent.currentRun$?.subscribe(measure))));
  }
  child.stdin.write("go\n");
  const reported = await lines.next();
  subscription.unsubscribe();
  if (measured === undefined) throw new Error("The server never published the assistant's message_end.");
  const { peak, maxRss, retained } = measured;
  const client = JSON.parse(String(reported.value)) as ClientResult;
  child.kill();
  const parseMs = parseTime(text, calls);
  return {
    name,
    argumentBytes: text.length * calls,
    endToEndMs: client.endToEndMs,
    parseMs: Math.round(parseMs * 100) / 100,
    peakHeapMB: megabytes(peak - heapBefore),
    retainedHeapMB: megabytes(retained),
    rssGrowthMB: megabytes(Math.max(0, maxRss - rssBefore)),
    frameMB: megabytes(measured.frameBytes),
    client,
  };
}

/**
 * `BENCH_ALLOCATION_PROFILE=<file>` with `--split`: V8's sampling heap profiler over the server's
 * span, counting what was collected too (the peak is mostly garbage), written as a
 * `.heapprofile` (Chrome DevTools reads it).
 */
function startAllocationSampling(): Session {
  const session = new Session();
  session.connect();
  session.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return session;
}

function stopAllocationSampling(session: Session, file: string): void {
  // The in-process session answers synchronously.
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error) throw error;
    writeFileSync(file, JSON.stringify(result.profile));
  });
  session.disconnect();
}

/** The client process of `--split`: `connectAgent`, measured from its prompt to the assistant's `message_end`. */
async function runClient(url: string): Promise<void> {
  const client = connectAgent(url, { session: "bench", WebSocket, reconnect: false });
  await client.ready;
  let peak = 0;
  const sample = (): void => {
    peak = Math.max(peak, heapUsed());
  };
  let ended: () => void = () => {};
  const messageEnd = new Promise<void>((resolve) => (ended = resolve));
  client.events$.subscribe((event) => {
    sample();
    if (event.type === "message_end" && event.message.role === "assistant") ended();
  });
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write("attached\n");
  await lines.next();
  collect();
  const heapBefore = heapUsed();
  const rssBefore = process.memoryUsage().rss;
  peak = heapBefore;
  const interval = setInterval(sample, 2);
  const started = performance.now();
  void client.prompt("write it");
  await messageEnd;
  const endToEndMs = performance.now() - started;
  clearInterval(interval);
  const maxRss = process.resourceUsage().maxRSS * 1024;
  collect();
  // What stays is by design in part: the client's state holds the transcript, the message included.
  const retained = heapUsed() - heapBefore;
  const result: ClientResult = { endToEndMs: Math.round(endToEndMs), peakHeapMB: megabytes(peak - heapBefore), retainedHeapMB: megabytes(retained), rssGrowthMB: megabytes(Math.max(0, maxRss - rssBefore)) };
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}

const clientOf = flag("client-of");
const requested = process.argv[2] as CaseName | undefined;
if (clientOf !== undefined) {
  await runClient(clientOf);
} else if (requested !== undefined && !requested.startsWith("--")) {
  if (!(requested in cases)) throw new Error(`Unknown case ${requested}; known: ${Object.keys(cases).join(", ")}`);
  const result = await runCase(requested);
  // Exits without waiting for the calls the agent goes on to run.
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
} else {
  const script = fileURLToPath(import.meta.url);
  const semiSpace = flag("semi-space");
  const only = flag("case");
  const passed = [...(flag("protocol") === undefined ? [] : ["--protocol", protocol.toString()]), ...(split ? ["--split"] : []), "--run-replay", runReplay];
  process.stdout.write(`load average before: ${loadavg().map((load) => load.toFixed(2)).join(" ")}; protocol ${protocol}, runReplay ${runReplay}${split ? ", client in its own process (server | client)" : ""}${semiSpace === undefined ? "" : `, --max-semi-space-size=${semiSpace}`}\n\n`);
  const side = (server: number, client: number | undefined): string => (client === undefined ? `${server}` : `${server} \\| ${client}`);
  process.stdout.write("| case | argument MB | end to end ms | JSON.parse ms | end to end / JSON.parse | peak heap MB | peak heap / arguments | retained heap MB | RSS growth MB | frames MB |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const name of Object.keys(cases) as CaseName[]) {
    if (only !== undefined && name !== only) continue;
    const nodeFlags = ["--expose-gc", ...(semiSpace === undefined ? [] : [`--max-semi-space-size=${semiSpace}`]), "--import", typeScriptLoader];
    const output = execFileSync(process.execPath, [...nodeFlags, script, name, ...passed], { encoding: "utf8" });
    const result = JSON.parse(output) as CaseResult;
    const argumentMB = result.argumentBytes / (1024 * 1024);
    const client = result.client;
    const ratio = (megabytes: number): string => `${(megabytes / argumentMB).toFixed(1)}x`;
    process.stdout.write(
      `| ${result.name} | ${argumentMB.toFixed(2)} | ${result.endToEndMs} | ${result.parseMs} | ${(result.endToEndMs / result.parseMs).toFixed(0)}x | ${side(result.peakHeapMB, client?.peakHeapMB)} | ${client === undefined ? ratio(result.peakHeapMB) : `${ratio(result.peakHeapMB)} \\| ${ratio(client.peakHeapMB)}`} | ${side(result.retainedHeapMB, client?.retainedHeapMB)} | ${side(result.rssGrowthMB, client?.rssGrowthMB)} | ${result.frameMB} |\n`,
    );
  }
  process.stdout.write(`\nload average after: ${loadavg().map((load) => load.toFixed(2)).join(" ")}\n`);
}
