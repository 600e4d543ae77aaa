import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { demoTools } from "../../src/demo/demo-tools.js";
import { type Cassette, cassetteModel } from "../../src/testing/index.js";
import { readCassette } from "../../src/testing/node/index.js";
import type { AgentEvent, LlmContext, ModelEvent } from "../../src/types.js";
import { startCli } from "../cli/cli-process.js";
import { marbles } from "../helpers/marbles.js";

interface Crash {
  cassette: Cassette;
  /** The model events the killed process had printed (inside its message_update events). */
  printed: ModelEvent[];
}

/** Records a chat on the demo model and kills the process with SIGKILL while the reply streams. */
async function recordAndKill(): Promise<Crash> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "rxagent-crash-")), "crash.cassette.jsonl");
  const cli = startCli(["chat", "--json", "--delay", "20", "--record", file]);
  cli.child.stdin.write("tell me a long story\n");
  await cli.waitFor((stdout) => stdout.split('"text_delta"').length > 6);
  cli.child.kill("SIGKILL");
  await cli.exited;
  const printed = cli
    .stdout()
    .split("\n")
    .filter((line) => line.endsWith("}"))
    .map((line) => JSON.parse(line) as AgentEvent)
    .flatMap((event) => (event.type === "message_update" ? [event.assistantMessageEvent] : []));
  return { cassette: readCassette(file), printed };
}

describe("a recording cut short by a crash", () => {
  let crash: Crash;
  beforeAll(async () => {
    crash = await recordAndKill();
  }, 60_000);

  it("keeps every event the process had passed on, and replays them at their times, then an error", marbles((m) => {
    const { cassette, printed } = crash;
    expect(cassette.calls).toHaveLength(1);
    const [call] = cassette.calls;
    const request = call!.request;
    expect(call!.events.map((event) => event.event.type).filter((type) => type === "done" || type === "error")).toStrictEqual([]);
    const context: LlmContext = { systemPrompt: request.systemPrompt!, messages: [{ role: "user", content: "tell me a long story", timestamp: 0 }], tools: demoTools() };

    const replayed: [number, ModelEvent][] = [];
    cassetteModel(cassette, { scheduler: m.scheduler }).stream(context, { signal: new AbortController().signal }).subscribe((event) => replayed.push([m.scheduler.now(), event]));
    m.flush();

    const recordedTimes = call!.events.map((event) => event.at);
    expect(replayed.map(([frame]) => frame)).toStrictEqual([...recordedTimes, recordedTimes.at(-1)]);
    const [first, ...middle] = replayed.slice(0, -1).map(([, event]) => event);
    expect(first?.type).toBe("start");
    // The recorder writes each event before passing it on, so the file holds at least what was printed.
    expect(printed.length).toBeGreaterThan(5);
    expect(middle.slice(0, printed.length)).toStrictEqual(printed);
    const last = replayed.at(-1)![1];
    expect(last).toStrictEqual({
      type: "error",
      reason: "error",
      error: { ...(middle.at(-1) as Extract<ModelEvent, { partial: unknown }>).partial, stopReason: "error", errorMessage: "cassetteModel: the recording of call #1 ends here (it was cut short)." },
    });
  }));
});
