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
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { Agent } from "../src/agent/agent.js";
import { serveAgents } from "../src/server/index.js";
import { megabyteArguments, smallCallArguments, streamingModel } from "./streamed-arguments.js";

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
}



function megabytes(bytes: number): number {
  return Math.round((bytes / (1024 * 1024)) * 10) / 10;
}

function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function runCase(name: CaseName): Promise<CaseResult> {
  const chosen: { text: () => string; delta: number; calls: number; logBytes?: number } = cases[name];
  const { text: makeText, delta, calls } = chosen;
  const text = makeText();
  let peak = 0;
  const sample = (): void => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  const server = await serveAgents({
    port: 0,
    createAgent: () => new Agent({ model: streamingModel(text, delta, calls, sample) }),
    ...(chosen.logBytes === undefined ? {} : { eventLog: { maxBytes: chosen.logBytes } }),
  });
  const socket = new WebSocket(server.url);
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
    // The assistant's message has crossed the wire: what follows (running the calls) is not streaming.
    if (frame.type === "event" && frame.event?.type === "message_end" && frame.event.message?.role === "assistant") ended();
  });
  socket.send(JSON.stringify({ id: "a", type: "attach", session: "bench" }));
  await new Promise((resolve) => setTimeout(resolve, 50));
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
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
  const retained = process.memoryUsage().heapUsed - heapBefore;
  socket.close();

  const parseStarted = performance.now();
  for (let call = 0; call < calls; call++) JSON.parse(text);
  const parseMs = performance.now() - parseStarted;
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

const requested = process.argv[2] as CaseName | undefined;
if (requested !== undefined) {
  if (!(requested in cases)) throw new Error(`Unknown case ${requested}; known: ${Object.keys(cases).join(", ")}`);
  const result = await runCase(requested);
  // Exits without waiting for the calls the agent goes on to run.
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
} else {
  const script = fileURLToPath(import.meta.url);
  process.stdout.write(`load average before: ${loadavg().map((load) => load.toFixed(2)).join(" ")}\n\n`);
  process.stdout.write("| case | argument MB | end to end ms | JSON.parse ms | end to end / JSON.parse | peak heap MB | peak heap / arguments | retained heap MB | RSS growth MB | frames MB |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const name of Object.keys(cases) as CaseName[]) {
    const output = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", script, name], { encoding: "utf8" });
    const result = JSON.parse(output) as CaseResult;
    const argumentMB = result.argumentBytes / (1024 * 1024);
    process.stdout.write(
      `| ${result.name} | ${argumentMB.toFixed(2)} | ${result.endToEndMs} | ${result.parseMs} | ${(result.endToEndMs / result.parseMs).toFixed(0)}x | ${result.peakHeapMB} | ${(result.peakHeapMB / argumentMB).toFixed(1)}x | ${result.retainedHeapMB} | ${result.rssGrowthMB} | ${result.frameMB} |\n`,
    );
  }
  process.stdout.write(`\nload average after: ${loadavg().map((load) => load.toFixed(2)).join(" ")}\n`);
}
