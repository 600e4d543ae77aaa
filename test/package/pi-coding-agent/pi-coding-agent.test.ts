import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { npm, repositoryRoot } from "../consumer.js";
import { startFakeOpenAI, textOf, type ChatRequest, type FakeOpenAI, type Reply } from "./fake-openai-server.js";
import { eventShape, piHome, PiRpc, runPi, type PiHome, type RpcLine } from "./pi-process.js";

// pi's coding agent (`@mariozechner/pi-coding-agent` 0.73.1, the `pi` CLI) on rxagent: installed
// twice, once as published (the real pi-agent-core) and once with npm `overrides` pointing its
// `@mariozechner/pi-agent-core` at a two-line shim that re-exports `rxagent/pi-agent-core`. Both
// talk to the same local OpenAI-compatible server (models.json), and each scenario runs on both
// engines: the rxagent run must give the answer and the same event sequence as the real one.

const PI_VERSION = "0.73.1";
type Engine = "reference" | "rxagent";
const engines: Engine[] = ["reference", "rxagent"];

let work: string;
const cli: Record<Engine, string> = { reference: "", rxagent: "" };

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "rxagent-pi-coding-agent-"));
  const packOutput = await npm(["pack", "--json", "--pack-destination", work], repositoryRoot);
  const tarball = path.join(work, (JSON.parse(packOutput.stdout.slice(packOutput.stdout.indexOf("["))) as { filename: string }[])[0]!.filename);
  const reference = project("reference", {});
  const rxagent = project("rxagent", { rxagent: `file:${tarball}`, rxjs: "7.8.2" });
  // The shim: what a pi user writes to swap the engine (docs/pi-agent-core-drop-in.md).
  const shim = path.join(rxagent, "pi-agent-core-on-rxagent");
  mkdirSync(shim);
  writeFileSync(path.join(shim, "package.json"), JSON.stringify({ name: "@mariozechner/pi-agent-core", version: PI_VERSION, type: "module", main: "./index.js", types: "./index.d.ts" }));
  writeFileSync(path.join(shim, "index.js"), 'export * from "rxagent/pi-agent-core";\n');
  writeFileSync(path.join(shim, "index.d.ts"), 'export * from "rxagent/pi-agent-core";\n');
  const install = ["install", "--prefer-offline", "--no-audit", "--no-fund"];
  await Promise.all([npm(install, reference), npm(install, rxagent)]);
  for (const engine of engines) cli[engine] = path.join(work, engine, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
  // One pack and two installs of pi (about 300 packages each): 13 minutes seen on a loaded 2-core machine.
}, 1_500_000);

afterAll(async () => {
  // Two pi installations are large: removed without blocking the event loop.
  if (work) await rm(work, { recursive: true, force: true });
});

function project(name: Engine, extra: Record<string, string>): string {
  const folder = path.join(work, name);
  mkdirSync(folder);
  const manifest: Record<string, unknown> = { name: `pi-on-${name}`, private: true, type: "module", dependencies: { "@mariozechner/pi-coding-agent": PI_VERSION, ...extra } };
  if (name === "rxagent") manifest["overrides"] = { "@mariozechner/pi-agent-core": "file:./pi-agent-core-on-rxagent" };
  writeFileSync(path.join(folder, "package.json"), JSON.stringify(manifest, null, 2));
  return folder;
}

/** The fake model's script: it reads the conversation and answers from it. */
function brain(gates: { firstCall?: Promise<void> } = {}) {
  return (request: ChatRequest): Reply => {
    const last = request.messages[request.messages.length - 1]!;
    const said = textOf(last.content);
    if (last.role === "tool") return { text: `The notes say: ${said.trim()}` };
    if (said === "read notes") return { toolCall: { name: "read", arguments: { path: "notes.txt" } }, ...(gates.firstCall ? { gate: gates.firstCall } : {}) };
    if (said === "what did I ask first?") {
      const first = request.messages.find((message) => message.role === "user");
      const toolResult = request.messages.find((message) => message.role === "tool");
      return { text: `You asked: ${textOf(first?.content)}; the tool said: ${textOf(toolResult?.content).trim()}` };
    }
    if (said.startsWith("steer: ")) {
      const toolResult = request.messages.find((message) => message.role === "tool");
      return { text: `Steered after the tool said ${textOf(toolResult?.content).trim()}` };
    }
    if (said.startsWith("follow-up: ")) return { text: "Followed up" };
    if (said === "wait forever") return { hang: "Thinking " };
    return { text: `You said ${said}` };
  };
}

async function withServer<T>(script: ReturnType<typeof brain>, body: (server: FakeOpenAI) => Promise<T>): Promise<T> {
  const server = await startFakeOpenAI(script);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

function homeFor(engine: Engine, scenario: string, server: FakeOpenAI): PiHome {
  return piHome(path.join(work, "homes", scenario, engine), cli[engine], server.baseUrl);
}

describe(`pi ${PI_VERSION} on rxagent/pi-agent-core`, () => {
  it("installs with @mariozechner/pi-agent-core resolved to the shim", () => {
    const fromPi = createRequire(path.join(work, "rxagent/node_modules/@mariozechner/pi-coding-agent/package.json"));
    const resolved = realpathSync(fromPi.resolve("@mariozechner/pi-agent-core"));
    expect(resolved).toBe(realpathSync(path.join(work, "rxagent/pi-agent-core-on-rxagent/index.js")));
  });

  it("pi --print runs a built-in tool and answers from its result, then pi -c restores the session", async () => {
    for (const engine of engines) {
      await withServer(brain(), async (server) => {
        const pi = homeFor(engine, "print", server);
        const printed = await runPi(pi, ["--print", "read notes"]);
        expect({ engine, code: printed.code, stdout: printed.stdout.trim(), stderr: printed.stderr }).toEqual({
          engine,
          code: 0,
          stdout: "The notes say: the secret is 42",
          stderr: "",
        });
        const continued = await runPi(pi, ["-c", "--print", "what did I ask first?"]);
        expect({ engine, code: continued.code, stdout: continued.stdout.trim() }).toEqual({
          engine,
          code: 0,
          stdout: "You asked: read notes; the tool said: the secret is 42",
        });
        // The continued run sent the whole restored conversation: prompt, tool call, result, answer, new prompt.
        expect(server.requests[2]!.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
      });
    }
  });

  it("pi --mode json gives the same event sequence on both engines", async () => {
    const shapes: Record<Engine, string[]> = { reference: [], rxagent: [] };
    for (const engine of engines) {
      await withServer(brain(), async (server) => {
        const finished = await runPi(homeFor(engine, "json", server), ["--mode", "json", "read notes"]);
        expect(finished.code).toBe(0);
        const lines = finished.stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as RpcLine);
        shapes[engine] = lines.filter((line) => line.type !== "session").map(eventShape);
      });
    }
    expect(shapes.rxagent).toEqual(shapes.reference);
    expect(shapes.rxagent).toContain('message_end assistant stop "The notes say: the secret is 42"');
  });

  it("pi --mode rpc: steer and follow-up while streaming, abort, then a prompt after the abort, as the real engine does", async () => {
    const shapes: Record<Engine, string[]> = { reference: [], rxagent: [] };
    for (const engine of engines) {
      let releaseFirstCall = (): void => undefined;
      const firstCall = new Promise<void>((resolve) => (releaseFirstCall = resolve));
      await withServer(brain({ firstCall }), async (server) => {
        const rpc = new PiRpc(homeFor(engine, "rpc", server));
        const agentEnds = (count: number) => rpc.until((line) => line.type === "agent_end", count);
        try {
          await rpc.command({ type: "prompt", message: "read notes" });
          await server.requestArrived(1);
          // While the model is still answering the first call: a steer and a follow-up.
          await rpc.command({ type: "steer", message: "steer: be brief" });
          await rpc.command({ type: "follow_up", message: "follow-up: thanks" });
          releaseFirstCall();
          await agentEnds(1);
          await rpc.command({ type: "prompt", message: "wait forever" });
          await rpc.until((line) => line.type === "message_update" && (line["assistantMessageEvent"] as { type: string }).type === "text_delta");
          await rpc.command({ type: "abort" });
          await agentEnds(2);
          await rpc.command({ type: "prompt", message: "after the abort" });
          await agentEnds(3);
        } finally {
          await rpc.close();
        }
        shapes[engine] = rpc.lines.filter((line) => line.type !== "response").map(eventShape);
      });
    }
    expect(shapes.rxagent).toEqual(shapes.reference);
    const shape = shapes.rxagent;
    const at = (wanted: string) => shape.indexOf(wanted);
    // Steering lands after the tool's result and before the next model call; the follow-up only once the agent would stop.
    expect(at('message_end toolResult "the secret is 42\\n"') < at('message_end user "steer: be brief"')).toBe(true);
    expect(at('message_end user "steer: be brief"') < at('message_end assistant stop "Steered after the tool said the secret is 42"')).toBe(true);
    expect(at('message_end assistant stop "Steered after the tool said the secret is 42"') < at('message_end user "follow-up: thanks"')).toBe(true);
    expect(at('message_end user "follow-up: thanks"') < at('message_end assistant stop "Followed up"')).toBe(true);
    // The abort: an aborted assistant message, then the run's end; then a new prompt is answered.
    const aborted = shape.findIndex((entry) => entry.startsWith("message_end assistant aborted"));
    expect(aborted).toBeGreaterThan(at('message_end user "wait forever"'));
    expect(shape.slice(aborted + 1, aborted + 3).map((entry) => entry.split(" ")[0])).toEqual(["turn_end", "agent_end"]);
    expect(at('message_end assistant stop "You said after the abort"')).toBeGreaterThan(aborted);
  });
});
