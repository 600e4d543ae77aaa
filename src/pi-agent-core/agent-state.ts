/* eslint-disable @typescript-eslint/no-explicit-any -- the reference's `Model<any>` and `AgentTool<any>`, see types.ts */
import type { Model } from "@mariozechner/pi-ai";
import type { AgentMessage, AgentState, AgentTool, ThinkingLevel } from "./types.js";

/** The model an `Agent` has before one is set: it names no provider, so a call fails as data. */
export const NO_MODEL: Model<any> = {
  id: "unknown",
  name: "unknown",
  api: "unknown",
  provider: "unknown",
  baseUrl: "",
  reasoning: false,
  input: [],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0,
  maxTokens: 0,
};

/** What `AgentOptions.initialState` may hold. */
export type InitialAgentState = Partial<Omit<AgentState, "pendingToolCalls" | "isStreaming" | "streamingMessage" | "errorMessage">>;

/**
 * The `Agent`'s state: fields the caller reads and writes between runs, and the run's own
 * (`isStreaming`, `streamingMessage`, `pendingToolCalls`, `errorMessage`), which only the Agent
 * writes (through `run`). `messages` and `tools` are live arrays: pushing into them sticks,
 * assigning one stores a copy.
 */
export class MutableAgentState implements AgentState {
  systemPrompt: string;
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
  isStreaming = false;
  streamingMessage: AgentMessage | undefined = undefined;
  pendingToolCalls: ReadonlySet<string> = new Set();
  errorMessage: string | undefined = undefined;
  private toolList: AgentTool<any>[];
  private messageList: AgentMessage[];

  constructor(initial: InitialAgentState = {}) {
    this.systemPrompt = initial.systemPrompt ?? "";
    this.model = initial.model ?? NO_MODEL;
    this.thinkingLevel = initial.thinkingLevel ?? "off";
    this.toolList = initial.tools?.slice() ?? [];
    this.messageList = initial.messages?.slice() ?? [];
  }

  get tools(): AgentTool<any>[] {
    return this.toolList;
  }

  set tools(tools: AgentTool<any>[]) {
    this.toolList = tools.slice();
  }

  get messages(): AgentMessage[] {
    return this.messageList;
  }

  set messages(messages: AgentMessage[]) {
    this.messageList = messages.slice();
  }

  /** Marks a tool call running (`true`) or done; a new set each time, so a reader's copy stays as it was. */
  markToolCall(toolCallId: string, running: boolean): void {
    const pending = new Set(this.pendingToolCalls);
    if (running) pending.add(toolCallId);
    else pending.delete(toolCallId);
    this.pendingToolCalls = pending;
  }
}
