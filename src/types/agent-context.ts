import type { AgentMessage } from "./messages.js";
import type { AgentTool } from "./tools.js";

/** The transcript and tools a run works on. */
export interface AgentContext {
  systemPrompt?: string;
  messages: AgentMessage[];
  tools?: AgentTool[];
}
