/**
 * Child process for the Redis fault tests: serves sessions on Redis with the approval test's tools
 * (deploy needs approval, read answers after 5 ms), says `URL <ws url>` once it listens, and runs
 * until it is killed. Mode `hang`: the approved deploy says `DEPLOYING` and never ends, so the test
 * can kill the process inside the tool. Mode `crash`: the process dies (exit 1) as soon as the
 * model is called, as a process did on a crafted model reply. Mode `wait`: the model calls `wait`
 * (never ends; it says `WAITING`), so the test can steer the run and kill the process before the
 * run takes the steer. Each call that runs says `RAN <id>`.
 */
import { Type } from "@sinclair/typebox";
import { asyncScheduler, Observable } from "rxjs";
import type { Model } from "../../src/index.js";
import { Agent, defineTool, textResult } from "../../src/index.js";
import { redisSessions } from "../../src/redis/index.js";
import { serveAgents } from "../../src/server/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { approvalBatch } from "../server/approval-restart-tools.js";

const [url, mode = "normal", leaseMs = "1000"] = process.argv.slice(2);
if (!url) throw new Error("usage: session-process-child.ts <redis url> [normal|hang|crash|wait] [leaseMs]");

const crashingModel: Model = {
  id: "crash",
  provider: "test",
  api: "test",
  stream: () => new Observable(() => void setTimeout(() => process.exit(1), 20)),
};

function modelFor(mode: string): Model {
  if (mode === "crash") return crashingModel;
  if (mode === "wait") return scriptedModel([{ content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] }], { scheduler: asyncScheduler, delay: 5 });
  return scriptedModel([approvalBatch, "Deployed to prod."], { scheduler: asyncScheduler, delay: 5 });
}

const tools = [
  defineTool({
    name: "wait",
    description: "Waits until the process dies",
    parameters: Type.Object({}),
    execute: (id) => {
      process.stdout.write(`RAN ${id}\nWAITING\n`);
      return new Promise<never>(() => undefined);
    },
  }),
  defineTool({
    name: "deploy",
    description: "Deploys; a person must approve",
    parameters: Type.Object({ target: Type.String() }),
    needsApproval: true,
    execute: (id, { target }) => {
      process.stdout.write(`RAN ${id}\n`);
      if (mode !== "hang") return textResult(`deployed to ${target}`);
      process.stdout.write("DEPLOYING\n");
      return new Promise<never>(() => undefined);
    },
  }),
  defineTool({
    name: "read",
    description: "Reads",
    parameters: Type.Object({}),
    execute: (id) => {
      process.stdout.write(`RAN ${id}\n`);
      return new Promise<ReturnType<typeof textResult>>((resolve) => setTimeout(() => resolve(textResult("read it")), 5));
    },
  }),
];

const sessions = redisSessions({
  redis: url,
  leaseMs: Number(leaseMs),
  createAgent: (_id, store) => Agent.open({ store, tools, model: modelFor(mode) }),
});
await sessions.ready();
const server = await serveAgents({ port: 0, ...sessions.serveOptions });
process.stdout.write(`URL ${server.url}\n`);
