/**
 * Whatever a model sends (test/reliability/arbitrary-model.ts), a server's client sees the run end
 * with `agent_end`: nothing the server encodes or the client decodes and reduces throws, and no
 * run wedges (property-based; the model answers 1 ms after each call, on a real timer).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Agent } from "../../src/agent/agent.js";
import { connectAgent } from "../../src/client/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import type { AgentEvent } from "../../src/types.js";
import { arbitraryModel, reply } from "../reliability/arbitrary-model.js";
import { waitFor } from "./helpers.js";

describe("a model that sends arbitrary events, behind a server (property-based)", () => {
  const plans = fc.sample(fc.array(reply, { minLength: 1, maxLength: 4 }), 100);
  let server: AgentServer;
  beforeAll(async () => {
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, createAgent: (session) => new Agent({ model: arbitraryModel(plans[Number(session)]!, 1), maxTurns: 6 }) });
  });
  afterAll(() => server.close());

  it("ends every run at the client with agent_end, the client's streams without error", async () => {
    for (const [index, plan] of plans.entries()) {
      const client = connectAgent(server.url, { session: String(index), WebSocket });
      const events: AgentEvent[] = [];
      const errors: unknown[] = [];
      client.events$.subscribe({ next: (event) => events.push(event), error: (error: unknown) => errors.push(error) });
      client.state$.subscribe({ error: (error: unknown) => errors.push(error) });
      try {
        await client.ready;
        await client.prompt("go");
        await waitFor(() => events.some((event) => event.type === "agent_end") || errors.length > 0, `agent_end of the run on ${JSON.stringify(plan)}`);
        expect({ plan, errors }).toStrictEqual({ plan, errors: [] });
        expect(client.state.isStreaming).toBe(false);
      } finally {
        client.close();
      }
    }
  });
});
