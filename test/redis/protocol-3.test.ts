import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { redisSessions } from "../../src/redis/index.js";
import { Agent } from "../../src/agent/agent.js";
import type { AgentEvent, AgentMessage } from "../../src/types.js";
import { argumentsGate, gatedArgumentsModel, writeFileTool } from "../helpers/gated-arguments-model.js";
import { assertContiguous, RawClient, waitFor } from "../server/helpers.js";
import { hasRedisServer } from "./redis-server.js";
import { attachedClient, servedSessions, useRedisServer } from "./served-sessions.js";

const written = { path: "notes.txt", content: Array.from({ length: 2000 }, (_unused, line) => `line ${line}: lorem ipsum`).join("\n") };
const argumentsText = JSON.stringify(written);

/** The gate of the test that runs: the model pauses there, 20 KB into the arguments. */
let gate = argumentsGate().gate;

/** The arguments of the `write_file` call in `message`, when it has one. */
const callArguments = (message: AgentMessage | undefined): unknown =>
  message?.role === "assistant" ? message.content.find((block) => block.type === "toolCall")?.arguments : undefined;

describe.skipIf(!hasRedisServer)("sessions on Redis in protocol 3", () => {
  const { redisServer, closing } = useRedisServer();

  it("a call's arguments cross once, as deltas, to clients of both processes, and clients that join mid-call on either get the text so far", async () => {
    const warnings: string[] = [];
    const options = { redis: redisServer().url, protocol: 3 as const, leaseMs: 2000, onWarning: (text: string) => warnings.push(text), createAgent: (_id: string, store: never) => Agent.open({ store, model: gatedArgumentsModel(argumentsText, 20 * 1024, () => gate), tools: [writeFileTool] }) };
    const [serverA, serverB] = [await servedSessions(options, closing), await servedSessions(options, closing)];
    const handles = argumentsGate();
    gate = handles.gate;
    const onA = await attachedClient(serverA.url, "args", closing);
    const onB = await attachedClient(serverB.url, "args", closing);
    expect(onA.frames[0]).toMatchObject({ type: "ack", protocol: 3 });
    expect(onB.frames[0]).toMatchObject({ type: "ack", protocol: 3 });
    expect(await onA.request({ type: "prompt", input: "Write my notes" })).toMatchObject({ type: "ack" });
    await handles.halfway;
    // Both clients hold the arguments streamed so far (the draft's last guess, at 16 KB), and every
    // delta up to the gate: B's mirror reads them from Redis after A's clients have them, and a
    // client joining B is sent what that mirror holds.
    const streamedSoFar = (client: RawClient) => {
      const events = client.agentEvents();
      const update = events.findLast((event) => event.type === "message_update");
      const shown = callArguments(update?.type === "message_update" ? update.message : undefined) as { content?: string } | undefined;
      const deltas = events.map((event) => (event.type === "message_update" && event.assistantMessageEvent.type === "toolcall_delta" ? event.assistantMessageEvent.delta : "")).join("");
      return typeof shown?.content === "string" && shown.content.length > 10_000 && written.content.startsWith(shown.content) && deltas === argumentsText.slice(0, 20 * 1024);
    };
    await waitFor(() => streamedSoFar(onA) && streamedSoFar(onB), "both clients to hold half the arguments");

    // Clients that join now: on A from the runner's encoder, on B from the mirror's decoder.
    const lateA = await attachedClient(serverA.url, "args", closing);
    const lateB = await attachedClient(serverB.url, "args", closing);
    for (const late of [lateA, lateB]) {
      const snapshot = await waitFor(() => late.frames.find((frame) => frame.type === "snapshot"), "a snapshot");
      expect(snapshot.argumentTexts).toStrictEqual([{ i: 1, text: argumentsText.slice(0, 20 * 1024) }]);
    }
    handles.open();

    const everyone = [onA, onB, lateA, lateB];
    await waitFor(() => everyone.every((client) => client.hasEvent("agent_end")), "every client to see the run end", 20_000);
    for (const client of everyone) {
      const ends = client.agentEvents().filter((event): event is Extract<AgentEvent, { type: "message_end" }> => event.type === "message_end" && event.message.role === "assistant");
      expect(callArguments(ends[0]?.message)).toStrictEqual(written);
      const updates = client.agentEvents().filter((event) => event.type === "message_update");
      expect(updates.length).toBeGreaterThan(0);
      // Every partial the client rebuilt is a beginning of the arguments.
      for (const update of updates) {
        const content = (callArguments(update.type === "message_update" ? update.message : undefined) as { content?: string } | undefined)?.content;
        if (content !== undefined) expect(written.content.startsWith(content)).toBe(true);
      }
    }
    // The streamed message ended with an `end` frame, and up to it no frame re-sent the arguments
    // (after it, the tool's start, the turn's end and the run's end carry them, as every event of the protocol).
    const frames = onB.events();
    const end = frames.findIndex((frame) => frame.type === "end");
    expect(end).toBeGreaterThan(0);
    expect(JSON.stringify(frames.slice(0, end + 1)).length).toBeLessThan(argumentsText.length * 1.35);
    assertContiguous(onA.events(), 0);
    assertContiguous(onB.events(), 0);
    expect(onB.agentEvents()).toStrictEqual(onA.agentEvents());
    expect(lateB.agentEvents()).toStrictEqual(lateA.agentEvents());

    const redis = new Redis(redisServer().url);
    const transcript = (await redis.lrange("rxagent:{args}:transcript", 0, -1)).map((line) => JSON.parse(line) as AgentMessage);
    redis.disconnect();
    expect(callArguments(transcript[1])).toStrictEqual(written);
    // Each frame reached the other process on the channel (an `end` frame was once not read as a frame).
    expect(warnings).toStrictEqual([]);
  }, 30_000);

  it("refuses a protocol it cannot speak before it connects", () => {
    expect(() => redisSessions({ redis: redisServer().url, protocol: 4 as never, createAgent: () => new Agent({ model: gatedArgumentsModel("{}", 0, () => gate) }) })).toThrow("redisSessions' protocol must be 2 or 3, got 4.");
  });
});
