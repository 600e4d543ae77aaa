// A server with one agent per session, and a Node client talking to it over a real WebSocket.
// Run: npx tsx examples/serve-and-connect.ts (needs `npm i ws`; Node 22+ could use its global WebSocket).
import { filter, firstValueFrom } from "rxjs";
import { WebSocket } from "ws";
import { Agent } from "rxagent";
import { connectAgent } from "rxagent/client";
import { demoModel, demoTools } from "rxagent/demo";
import { serveAgents } from "rxagent/server";

const server = await serveAgents({
  port: 0,
  createAgent: () => new Agent({ model: demoModel({ delay: 1 }), tools: demoTools({ stepDelay: 1 }) }),
});
const client = connectAgent(server.url, { WebSocket });
console.log("session", await client.ready);

const ended = firstValueFrom(client.events$.pipe(filter((event) => event.type === "agent_end")));
await client.prompt("what is 12*7?");
await ended;
const answer = client.state.messages.at(-1);
console.log("answer:", answer?.role === "assistant" ? answer.content.map((block) => (block.type === "text" ? block.text : "")).join("") : answer);

client.close();
await server.close();
