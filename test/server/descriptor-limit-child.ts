/**
 * Child process for the descriptor test: opens `count` sessions, each an Agent on its own JSONL
 * file, runs one prompt in each and keeps every agent alive (sessions created and left), then
 * prints how many runs ended well. Run under `ulimit -n 256` by the test.
 */
import { join } from "node:path";
import { Agent } from "../../src/index.js";
import { JsonlTranscriptStore } from "../../src/server/index.js";
import { scriptedModel } from "../../src/testing/index.js";

const [directory, countText] = process.argv.slice(2);
if (directory === undefined || countText === undefined) throw new Error("usage: descriptor-limit-child.ts <directory> <count>");

const agents: Agent[] = [];
const warnings: string[] = [];
let completed = 0;
for (let index = 0; index < Number(countText); index++) {
  const store = new JsonlTranscriptStore(join(directory, `session-${index}.jsonl`), { onWarning: (message) => warnings.push(message) });
  const agent = await Agent.open({ model: scriptedModel([`Answer ${index}`]), store });
  agents.push(agent);
  const messages = await agent.run(`Question ${index}`);
  const last = messages.at(-1);
  if (last?.role === "assistant" && last.stopReason === "stop") completed++;
  else process.stderr.write(`session ${index}: ${JSON.stringify(last)}\n`);
}
process.stdout.write(`${JSON.stringify({ completed, agents: agents.length, warnings })}\n`);
