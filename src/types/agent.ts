import type { AgentMessage, AssistantMessage, ImageContent, ToolResultMessage, Usage } from "./messages.js";
import type { QueuedMessages } from "./events.js";
import type { ThinkingLevel } from "./model.js";

/**
 * What `Agent.prompt` accepts: text, text with images, one message, or several messages.
 * @example agent.prompt({ text: "What is in this picture?", images: [{ type: "image", data, mimeType: "image/png" }] })
 */
export type PromptInput = string | { text: string; images?: ImageContent[] } | AgentMessage | AgentMessage[];

/**
 * The state of an `Agent`, as `state$` replays it. `pendingToolCalls` is never mutated once
 * emitted; `messages` is the exception (see there).
 */
export interface AgentState {
  /**
   * The transcript: every message that has ended. One array for the agent's life (until
   * `reset`), appended in place as each message ends, so a long session costs the same per turn:
   * read it, and copy it (`[...state.messages]`) to keep the transcript as it stands.
   */
  messages: readonly AgentMessage[];
  /** True from a run's start until its `agent_end`. */
  isStreaming: boolean;
  /** The assistant message being streamed, as it stands. */
  streamingMessage?: AssistantMessage;
  /** Ids of the tool calls running now. */
  pendingToolCalls: readonly string[];
  /**
   * Ids of the calls ready to run that wait for a concurrency slot (`maxConcurrency`, or their
   * tool's `concurrency`); each moves to `pendingToolCalls` as it starts.
   */
  waitingToolCalls: readonly string[];
  /** Calls waiting for `approve` / `deny`, oldest first. */
  pendingApprovals: readonly PendingApproval[];
  /**
   * Why the most recent run's last assistant message failed or was aborted, if it did; or what
   * else failed, from `agent_end.errorMessage` (a hook or a queue of the caller's).
   */
  errorMessage?: string;
  queuedSteering: number;
  queuedFollowUp: number;
  /** Token and cost totals of every assistant message in the transcript, and of tools that reported `usage`. */
  usage: Usage;
}

/** A call waiting for approval, as `AgentState.pendingApprovals` shows it. */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  args: unknown;
  /** When it started waiting, by the agent's scheduler. */
  since: number;
  /**
   * Set when the call waits inside a sub-agent (`agentTool`): the id of the agent's own call that
   * runs that sub-agent. `approve` / `deny` answer it as any other.
   */
  parentToolCallId?: string;
}

/** An agent as plain JSON, for apps with their own storage. */
export interface AgentSnapshot {
  version: 1;
  systemPrompt?: string;
  thinkingLevel?: ThinkingLevel;
  messages: AgentMessage[];
  queued: QueuedMessages;
}

/**
 * Where an `Agent` keeps its transcript. `JsonlTranscriptStore` is the default implementation.
 *
 * Contract: `append` is called once per message as it ends, in transcript order, and must have
 * made the message durable (at least against a crash of the process) when it returns.
 */
export interface TranscriptStore {
  load(): Promise<AgentMessage[]>;
  append(message: AgentMessage): void;
  /** Forgets the whole transcript (used by `Agent.reset`). */
  clear(): void;
  /**
   * Optional: makes `messages` the whole transcript, followed by `records` (the session's
   * settings, if it keeps any) and no other record, in one step that a crash cannot leave half
   * done (used by `Agent.replaceState`). Without it the agent calls `clear`, then `append` for
   * each message and `record` for each record.
   */
  replace?(messages: readonly AgentMessage[], records?: readonly TranscriptRecord[]): void;
  close?(): void;
  /**
   * Optional, with `loadTranscript`: keeps a record beside the messages, durable as `append` is,
   * so that `Agent.open` reopens a run stopped while calls waited for approval with the same
   * calls pending (see `TranscriptRecord`).
   */
  record?(record: TranscriptRecord): void;
  /**
   * Optional, with `record`: the messages, and the records kept since the last message that is
   * not a tool result (the last assistant message's batch), in the order they were kept; earlier
   * records describe batches that are over.
   */
  loadTranscript?(): Promise<StoredTranscript>;
}

/** What `TranscriptStore.loadTranscript` gives back. */
export interface StoredTranscript {
  messages: AgentMessage[];
  /** The records of the last batch (approvals and held-back results), settings records left out. */
  records: TranscriptRecord[];
  /** Every `settings` record of the transcript merged in order, a later field over an earlier; absent without any. */
  settings?: StoredSettings;
}

/**
 * What a session keeps of the settings `Agent.replaceState` changed, as JSON: a model or a tool is
 * code, so it is kept by name and found again among those given to `Agent.open`. A field is
 * present only once it was replaced.
 */
export interface StoredSettings {
  systemPrompt?: string;
  thinkingLevel?: ThinkingLevel;
  /** The model's `provider` and `id`. */
  model?: { provider: string; id: string };
  /** The tools' names, in order. */
  tools?: string[];
}

/**
 * What an `Agent` keeps in its store besides messages. For a restart while a call waits for
 * approval: a call that starts waiting, its wait that ends (answered, timed out, aborted or
 * cancelled), and, in a batch where a call waited, each call's result as the call finishes
 * (the result message itself is appended only in call order, which may be hours later). For
 * the session's settings: what `replaceState` changed of them.
 */
export type TranscriptRecord =
  | { type: "approval_pending"; approval: PendingApproval }
  | { type: "approval_settled"; toolCallId: string }
  | { type: "tool_result"; message: ToolResultMessage }
  /** Settings `Agent.replaceState` changed (only the fields it changed), for `Agent.open` to apply. */
  | { type: "settings"; settings: StoredSettings };
