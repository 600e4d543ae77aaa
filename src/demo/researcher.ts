import { type SchedulerLike } from "rxjs";
import { agentTool } from "../agents/agent-tool.js";
import type { AgentTool, Model } from "../types.js";
import { demoModel } from "./demo-model.js";

export interface ResearcherOptions {
  /** The sub-agent's tools: the demo's `list_files` and `read_file`. */
  tools: readonly AgentTool[];
  /** The sub-agent's model. Default: its own offline demo model. */
  model?: Model;
  /** Paces the default model's tokens and stamps messages. */
  scheduler: SchedulerLike;
  /** Time between the default model's tokens. Default 25 (as the demo model's); 0 is synchronous. */
  tokenDelay?: number;
}

/**
 * The demo's sub-agent: a `researcher` tool whose call runs an agent of its own, with its own
 * model and only the file tools, so `npm start` shows an agent made of agents. Its steps show
 * indented under the call in the terminal and in the web page's tool card.
 * @example researcherTool({ tools: [listFiles, readFile], scheduler: asyncScheduler })
 */
export function researcherTool(options: ResearcherOptions): AgentTool {
  return agentTool({
    name: "researcher",
    label: "Researcher",
    description: "A sub-agent with its own model and the file tools (list_files, read_file): give it a task about this folder's files, and it reports what it found.",
    systemPrompt: "You are a researcher. Answer from the files only, with list_files and read_file.",
    tools: options.tools,
    model: options.model ?? demoModel({ scheduler: options.scheduler, delay: options.tokenDelay ?? 25 }),
    scheduler: options.scheduler,
    maxTurns: 6,
  });
}
