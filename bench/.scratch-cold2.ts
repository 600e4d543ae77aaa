import { rxagentAt } from "./implementations/rxagent.js";
import { reference } from "./implementations/reference.js";
import { buildConversation } from "./workloads/replies.js";
import { resolvedTool, instantTool } from "./workloads/tools.js";
const [entry, name, turnsText, toolName] = process.argv.slice(2);
const impl = name === "reference" ? reference : await rxagentAt(entry!);
const tool = toolName === "value" ? instantTool : resolvedTool;
const out: string[] = [];
for (const turns of turnsText!.split(",").map(Number)) {
  const scenario = { replies: buildConversation(turns, { deltas: 0, toolCalls: 8 }), tool };
  const t0 = performance.now();
  await impl.run(scenario, () => {});
  out.push(`${turns}:${(performance.now() - t0).toFixed(1)}`);
}
console.log(name, out.join(" "));
