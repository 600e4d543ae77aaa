/**
 * Child process for the chaos test (test/redis/chaos.test.ts): serves sessions on Redis with one
 * tool (`calc`, answers after 30 ms) and a model that calls it once per prompt and then answers,
 * says `URL <ws url>` once it listens, and runs until it is killed. Its warnings go to stdout as
 * `WARN <text>` lines, which the test prints when a run breaks a promise. With `CHAOS_STALL_MAX_MS`
 * set, its event loop stalls now and then (about once in 2.5 s, 0 to that many ms), as on a
 * loaded machine, so leases expire under live processes.
 */
import { Type } from "@sinclair/typebox";
import { asyncScheduler } from "rxjs";
import { Agent } from "../../src/agent/agent.js";
import { redisSessions } from "../../src/redis/index.js";
import { serveAgents } from "../../src/server/index.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";

const [url, leaseMs = "1000"] = process.argv.slice(2);
if (!url) throw new Error("usage: chaos-process-child.ts <redis url> [leaseMs]");

const calc = defineTool({
  name: "calc",
  description: "Computes",
  parameters: Type.Object({}),
  execute: () => new Promise<ReturnType<typeof textResult>>((resolve) => setTimeout(() => resolve(textResult("42")), 30)),
});

/** A prompt gets a call, the call's result gets the answer: whatever the process, whatever the call number. */
const reply: ScriptedTurn = (context) => {
  const last = context.messages.at(-1);
  if (last?.role === "toolResult") return "The answer is forty two, as computed.";
  return { content: [{ type: "toolCall", id: `call-${context.messages.length}`, name: "calc", arguments: {} }] };
};

const sessions = redisSessions({
  redis: url,
  leaseMs: Number(leaseMs),
  onWarning: (message) => void process.stdout.write(`WARN ${message.replaceAll("\n", " ")}\n`),
  createAgent: (_id, store) => Agent.open({ store, tools: [calc], model: scriptedModel(Array.from({ length: 50 }, () => reply), { scheduler: asyncScheduler, delay: 10 }) }),
});
await sessions.ready();
const server = await serveAgents({ port: 0, ...sessions.serveOptions });
process.stdout.write(`URL ${server.url}\n`);

const stallMaxMs = Number(process.env["CHAOS_STALL_MAX_MS"] ?? 0);
if (stallMaxMs > 0) {
  const stalls = setInterval(() => {
    if (Math.random() >= 0.08) return;
    // Blocks the event loop without using the CPU (a busy loop would load the machine for the other processes).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.random() * stallMaxMs);
  }, 200);
  stalls.unref();
}
