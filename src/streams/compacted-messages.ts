import { roleOf } from "../types/messages.js";
import type { AgentMessage, CompactionSummaryMessage, UserMessage } from "../types.js";

/**
 * The transcript as the model sees it after its last compaction: that summary (as a user
 * message), the messages it kept, and every message after it. A transcript without a summary is
 * returned as it is (a copy). `compaction`'s `transformContext`; call it from your own
 * `transformContext` when you have one.
 *
 * Intuition: the transcript keeps everything, append-only (so every store keeps it as it is);
 * this view is what a reopened session and each next call continue from.
 * @example transformContext: (messages) => compactedMessages(messages).filter(isNotNoise)
 */
export function compactedMessages(messages: readonly AgentMessage[]): AgentMessage[] {
  const window = compactedWindow(messages);
  if (window.summary === undefined) return [...messages];
  const view: AgentMessage[] = [summaryForModel(window.summary)];
  for (const index of window.indices) view.push(messages[index]!);
  return view;
}

/** The last compaction of a transcript (if any) and, in order, the indices of the messages the model still sees word for word. */
export interface CompactedWindow {
  readonly summary: CompactionSummaryMessage | undefined;
  readonly indices: readonly number[];
}

export function compactedWindow(messages: readonly AgentMessage[]): CompactedWindow {
  const at = messages.findLastIndex(isCompactionSummary);
  const summary = at === -1 ? undefined : (messages[at] as unknown as CompactionSummaryMessage);
  const start = summary === undefined ? 0 : Math.max(0, at - keptOf(summary));
  const indices: number[] = [];
  for (let index = start; index < messages.length; index++) {
    // An earlier summary inside the kept messages was summarized into this one.
    if (index !== at && !isCompactionSummary(messages[index]!)) indices.push(index);
  }
  return { summary, indices };
}

/** Whether a transcript message is a compaction's summary. */
export function isCompactionSummary(message: unknown): message is CompactionSummaryMessage {
  return roleOf(message as AgentMessage) === "compactionSummary";
}

/**
 * The user message a summary becomes for the model, made once per summary: the cache of
 * `convertMessageToLlm` goes by identity, and the same summary is in every call until the next.
 */
export function summaryForModel(summary: CompactionSummaryMessage): UserMessage {
  let converted = modelSummaries.get(summary);
  if (converted === undefined) {
    const text = `The conversation so far was compacted. Its summary:\n<summary>\n${summary.summary}\n</summary>`;
    converted = { role: "user", content: text, timestamp: summary.timestamp };
    modelSummaries.set(summary, converted);
  }
  return converted;
}

const modelSummaries = new WeakMap<CompactionSummaryMessage, UserMessage>();

/** A stored summary's kept count, read defensively: a store may hand back anything. */
function keptOf(summary: CompactionSummaryMessage): number {
  const kept = summary.keptMessages;
  return Number.isInteger(kept) && kept > 0 ? kept : 0;
}

