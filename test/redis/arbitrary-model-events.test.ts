/**
 * Whatever a model sends (test/reliability/arbitrary-model.ts), a session on Redis ends its run at
 * the clients of both processes with `agent_end`, in protocols 2 and 3, and the watching process
 * shows the transcript the running one does: nothing the runner encodes or the mirror decodes
 * throws (property-based; the model answers 1 ms after each call, on a real timer).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Agent } from "../../src/agent/agent.js";
import { connectAgent } from "../../src/client/index.js";
import type { AgentEvent } from "../../src/types.js";
import { arbitraryModel, reply } from "../reliability/arbitrary-model.js";
import { waitFor } from "../server/helpers.js";
import { hasRedisServer } from "./redis-server.js";
import { servedSessions, useRedisServer } from "./served-sessions.js";

describe.skipIf(!hasRedisServer)("a model that sends arbitrary events, in a session on Redis (property-based)", () => {
  const { redisServer, closing } = useRedisServer();

  it.each([2, 3] as const)("protocol %i: ends every run with agent_end on both processes, with one transcript", async (protocol) => {
    const plans = fc.sample(fc.array(reply, { minLength: 1, maxLength: 4 }), 100);
    const options = { redis: redisServer().url, protocol, leaseMs: 2000, createAgent: (id: string, store: never) => Agent.open({ store, model: arbitraryModel(plans[Number(id)]!, 1), maxTurns: 6 }) };
    const [running, watching] = [await servedSessions(options, closing), await servedSessions(options, closing)];
    for (const [index, plan] of plans.entries()) {
      const clients = [connectAgent(running.url, { session: String(index), WebSocket }), connectAgent(watching.url, { session: String(index), WebSocket })];
      const seen: AgentEvent[][] = [[], []];
      const errors: unknown[] = [];
      clients.forEach((client, which) => {
        client.events$.subscribe({ next: (event) => seen[which]!.push(event), error: (error: unknown) => errors.push(error) });
        client.state$.subscribe({ error: (error: unknown) => errors.push(error) });
      });
      try {
        await Promise.all(clients.map((client) => client.ready));
        await clients[0]!.prompt("go");
        await waitFor(() => seen.every((events) => events.some((event) => event.type === "agent_end")) || errors.length > 0, `agent_end on both processes of the run on ${JSON.stringify(plan)}`);
        expect({ plan, errors }).toStrictEqual({ plan, errors: [] });
        expect(clients[1]!.state.messages).toEqual(clients[0]!.state.messages);
      } finally {
        for (const client of clients) client.close();
      }
    }
  });
});
