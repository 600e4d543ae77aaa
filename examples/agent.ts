// An Agent with the offline demo model: prompt (an Observable), run (a Promise), steer,
// followUp, abort, and `for await` over a run's events. Run: npx tsx examples/agent.ts
import { filter, firstValueFrom } from "rxjs";
import { Agent, toAsyncIterable, type AgentMessage } from "rxagent";
import { demoModel, demoTools } from "rxagent/demo";

const agent = new Agent({ systemPrompt: "You are terse.", model: demoModel({ delay: 1 }), tools: demoTools({ stepDelay: 1 }) });
const lastText = (messages: readonly AgentMessage[]) => {
  const last = messages.at(-1);
  return last?.role === "assistant" ? last.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("") : "";
};

// 1. await the whole run: resolves with the messages it added (the prompt included).
const added = await agent.run("what is 12*7?");
console.log("run:", lastText(added));

// 2. the events as they happen, with `for await`.
for await (const event of toAsyncIterable(agent.prompt("what is 2+2?"))) {
  if (event.type === "tool_execution_end") console.log("tool:", event.toolName, event.result.content[0]);
}

// 3. steer a run while it works (lands before the next model call); queue a follow-up for after.
const events = agent.prompt("what is 6*7?");
agent.steer("also, what is 10/4?");
agent.followUp("what time is it?");
await firstValueFrom(events.pipe(filter((event) => event.type === "agent_end")));
console.log("steered and followed up:", agent.messages.length, "messages");

// 4. abort: the run still ends (stopReason "aborted"), and run() resolves.
const aborted = agent.run("what is 1+1?");
agent.abort();
console.log("aborted:", (await aborted).at(-1)?.role, (agent.messages.at(-1) as { stopReason?: string }).stopReason);
