import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { waitFor } from "../server/helpers.js";
import { hasRedisServer } from "./redis-server.js";
import { attachedClient, servedSessions, useRedisServer } from "./served-sessions.js";

/** A tool whose result details are `details` (what JSON cannot write as it is). */
const toolWithDetails = (details: unknown) =>
  defineTool({ name: "count", description: "Counts", parameters: Type.Object({}), execute: () => ({ content: [{ type: "text", text: "many" }], details }) });

describe.skipIf(!hasRedisServer)("a session's runner on Redis", () => {
  const { redisServer, closing } = useRedisServer();

  /** Runs one prompt of a session whose tool returns `details`, watched from both processes. */
  async function runWatched(session: string, details: unknown, warnings: string[]) {
    const model = () => scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "count", arguments: {} }] }, "Done."]);
    const options = { redis: redisServer().url, leaseMs: 2000, onWarning: (text: string) => warnings.push(text), createAgent: (_id: string, store: never) => Agent.open({ store, model: model(), tools: [toolWithDetails(details)] }) };
    const [serverA, serverB] = [await servedSessions(options, closing), await servedSessions(options, closing)];
    const onA = await attachedClient(serverA.url, session, closing);
    const onB = await attachedClient(serverB.url, session, closing);
    expect(await onA.request({ type: "prompt", input: "count" })).toMatchObject({ type: "ack" });
    await waitFor(() => onA.hasEvent("agent_end") && onB.hasEvent("agent_end"), "agent_end on both processes");
    return onB;
  }

  it("sends a tool's BigInt details to the other process's clients as digits", async () => {
    const warnings: string[] = [];
    const onB = await runWatched("big", { count: 10n }, warnings);
    expect(onB.agentEvents().find((event) => event.type === "tool_execution_end")).toMatchObject({ result: { details: { count: "10" } } });
    // The transcript stores the same message in the same safe form, and says so.
    expect(warnings).toStrictEqual(["rxagent:{big}:transcript: a message held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form."]);
  });

  // It threw inside the agent's events$ subscriber, which rxjs rethrows on a timer: the process
  // ended, and so did each process that took the session over in turn. Then the event was left
  // out, with a warning; now only the value that cannot be written is.
  it("sends an event whose details hold a toJSON that throws, with a note of why in its place, and the run and its clients go on", async () => {
    const warnings: string[] = [];
    const unwritable = {
      toJSON() {
        throw new Error("not today");
      },
    };
    const onB = await runWatched("unwritable", { unwritable, kept: 1 }, warnings);
    expect(onB.agentEvents().find((event) => event.type === "tool_execution_end")).toMatchObject({ result: { details: { unwritable: "[unwritable: not today]", kept: 1 } } });
    expect(warnings).toStrictEqual(["rxagent:{unwritable}:transcript: a message held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form."]);
  });
});
