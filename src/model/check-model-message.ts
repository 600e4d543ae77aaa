import { isPendingSnapshot } from "../util/shared-content.js";
import { errorText } from "../util/error-text.js";
import type { AssistantMessage, ToolCall } from "../types.js";
import { CallIdTable } from "./call-id-table.js";
import { usableUsage } from "./usable-usage.js";

/**
 * Why a model's message cannot be used as an assistant message, or `undefined` when it can.
 *
 * A provider of one's own may send a `done` without `message`, an `error` without `error`, or a
 * message without `content`; the loop would otherwise throw deep inside a subscriber. One whose
 * `role` is not "assistant" would enter the transcript as a message no UI, store or provider
 * takes for the model's reply (turn_end would carry it as the turn's message).
 */
export function problemOfModelMessage(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return `is ${describe(message)}`;
  const role = (message as { role?: unknown }).role;
  if (role !== "assistant") return `has ${roleText(role)}, not "assistant"`;
  const content = (message as { content?: unknown }).content;
  if (!Array.isArray(content)) return `has content that is ${describe(content)}, not an array`;
  for (const block of content as unknown[]) {
    if (typeof block !== "object" || block === null) return "has a content block that is not an object";
  }
  return undefined;
}

/**
 * The message the loop ends a model call with when the model did not deliver one, built from
 * the last usable partial: `changes` applied, usage filled in and tool-call ids made unique as for
 * a final message (`settledModelMessage`), and any content block that is not an object left out.
 * Why: a partial is checked only for its role and its content array (`isUsablePartial`, per
 * event), and this message enters the transcript like a final one.
 */
export function endingFromPartial(partial: AssistantMessage, changes: Pick<AssistantMessage, "stopReason" | "errorMessage">): AssistantMessage {
  const content = partial.content.some(isNotObject) ? partial.content.filter((block) => !isNotObject(block)) : partial.content;
  return settledModelMessage({ ...partial, content, ...changes });
}

const isNotObject = (block: unknown): boolean => typeof block !== "object" || block === null;

/**
 * True when a streamed event's `partial` can stand for the message so far. Cheaper than
 * `problemOfModelMessage` (no scan of the blocks): it runs for every delta.
 */
export function isUsablePartial(partial: unknown): partial is AssistantMessage {
  if (typeof partial !== "object" || partial === null || (partial as { role?: unknown }).role !== "assistant") return false;
  // A snapshot not built yet has its content by construction; reading it would build it.
  return isPendingSnapshot(partial) || Array.isArray((partial as { content?: unknown }).content);
}

/** The tool-call ids a run's earlier messages took (`settledModelMessage`). */
export interface TakenCallIds {
  /** Made at the run's first tool call. */
  toolCallIds: CallIdTable | undefined;
  /** The run's transcript, which holds the messages whose ids the table took. */
  readonly context: { readonly messages: readonly unknown[] };
}

/**
 * The final message as the transcript keeps it: `usage` filled in when the provider left it out,
 * with every count and cost a finite number (the Agent adds it to its totals: `usableUsage`), an
 * `errorMessage` that is text, and each tool call with an id of its own and a name.
 *
 * Two tool calls with the same id would get two results with that id, which providers refuse and
 * which no UI can tell apart: the second and later get `<id>_2`, `<id>_3`, … (a fresh id), also
 * when the earlier one was in an earlier message of the run's transcript (`taken`, whose table
 * this adds the message's ids to). A call with no id (or one that is not a non-empty string)
 * gets `call_2`, `call_3`, …: its result would otherwise have none, and every later request of
 * the conversation would be refused. A name that is not a string becomes `""` (its result says
 * the call names no tool). The message is copied only when something changes, so a well-formed
 * message costs one scan and a table lookup per call.
 */
export function settledModelMessage(message: AssistantMessage, taken: TakenCallIds = { toolCallIds: undefined, context: { messages: [] } }): AssistantMessage {
  let settled = message;
  const usage = usableUsage(message.usage);
  if (usage !== message.usage) settled = { ...settled, usage };
  // Every client and UI shows it as text; "[object Object]" says nothing.
  if (message.errorMessage !== undefined && typeof message.errorMessage !== "string") settled = { ...settled, errorMessage: errorText(message.errorMessage) };
  const content = settled.content;
  const earlier = taken.toolCallIds;
  let calls = 0;
  let malformed = false;
  for (const block of content) {
    if (block.type !== "toolCall") continue;
    calls += 1;
    if (!isCallId(block.id) || typeof block.name !== "string" || earlier?.has(block.id)) malformed = true;
  }
  if (calls === 0) return settled;
  const table = (taken.toolCallIds ??= new CallIdTable((id) => holdsCallId(taken.context.messages, id)));
  if (!malformed && (calls < 2 || (calls <= FEW_CALLS && !hasRepeatedId(content)))) {
    for (const block of content) if (block.type === "toolCall") table.add(block.id);
    return settled;
  }
  // This message's ids as sent, and those given out so far: a new name takes none of them.
  const inMessage = new Set<string>();
  for (const block of content) if (block.type === "toolCall" && isCallId(block.id)) inMessage.add(block.id);
  const given = new Set<string>();
  let renamed: AssistantMessage["content"] | undefined;
  content.forEach((block, index) => {
    if (block.type !== "toolCall") return;
    const name = typeof block.name === "string" ? block.name : "";
    let id = block.id;
    if (!isCallId(id) || given.has(id) || table.has(id)) {
      id = table.renamed(isCallId(id) ? id : "call", inMessage);
      inMessage.add(id);
    }
    given.add(id);
    if (id === block.id && name === block.name) return;
    renamed ??= [...content];
    renamed[index] = { ...block, id, name } satisfies ToolCall;
  });
  // After the loop: until then `table` answers for earlier messages only, which the transcript holds.
  for (const id of given) table.add(id);
  return renamed ? { ...settled, content: renamed } : settled;
}

/** Whether a message of `messages` (newest first) holds a tool call with this id. */
function holdsCallId(messages: readonly unknown[], id: string): boolean {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as { role?: unknown; content?: unknown } | undefined;
    if (message?.role !== "assistant" || !Array.isArray(message.content)) continue;
    for (const block of message.content as unknown[]) if ((block as { type?: unknown } | null)?.type === "toolCall" && (block as { id?: unknown }).id === id) return true;
  }
  return false;
}

function isCallId(id: unknown): id is string {
  return typeof id === "string" && id !== "";
}

/**
 * Up to this many calls, a message is first searched for a repeated id pair by pair. Why: most
 * have none, and filling two Sets with every id was 2% of the samples of bench W2 (8 calls per
 * reply, profile.ts W2, 2026-12-03); past it the Sets keep the search linear.
 */
const FEW_CALLS = 16;

/** True when two tool calls of `content` share an id (compared as a Set compares them). */
function hasRepeatedId(content: AssistantMessage["content"]): boolean {
  for (let index = 0; index < content.length; index++) {
    const block = content[index]!;
    if (block.type !== "toolCall") continue;
    for (let later = index + 1; later < content.length; later++) {
      const other = content[later]!;
      if (other.type === "toolCall" && sameValueZero(other.id, block.id)) return true;
    }
  }
  return false;
}

function sameValueZero(left: unknown, right: unknown): boolean {
  return left === right || (left !== left && right !== right);
}

/** How an error names a message's wrong role; a long string is cut, as a provider's text may be. */
function roleText(role: unknown): string {
  if (role === undefined) return "no role";
  if (typeof role !== "string") return `a role that is ${describe(role)}`;
  return `role ${JSON.stringify(role.length > 40 ? `${role.slice(0, 40)}…` : role)}`;
}

/** How an unexpected value reads in an error text: "missing", "null", "an array", "a string". */
export function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
