/**
 * `node --expose-gc --import ./bench/typescript-loader.mjs bench/frame-encoding.ts [--source DIR] [--calls N]`:
 * what the server spends per event to turn a streamed reply into frames (issue 35, item 4): the
 * model's `AssistantMessageDraft` makes each event of a reply of N small tool calls (default
 * 10,000) in 16-character deltas, as bench:stream-e2e streams them, and the session's
 * `sessionFrameOf` (the delta encoder and the frame's JSON) and `mergeableUpdate` take it at once,
 * as the server does in the agent's synchronous pass. Without the loop, the agent, the log and
 * the socket. Each of 15 rounds runs after a full GC, warm from the second on. Prints the median
 * and the lowest µs per event. `--source DIR` loads `src/` from another tree (a worktree of an older
 * commit, say), to set two builds side by side: run both, alternating.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentEvent, ModelEvent } from "../src/types.js";
import type { AssistantMessageDraft as Draft } from "../src/model/assistant-message-draft.js";
import type { MessageDeltaEncoder as Encoder } from "../src/protocol/message-delta.js";
import type { sessionFrameOf as frameOf } from "../src/server/rebuilt-update-frame.js";
import type { mergeableUpdate as mergeable } from "../src/server/mergeable-update.js";
import { smallCallArguments } from "./streamed-arguments.js";

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

const source = pathToFileURL(resolve(argument("--source", new URL("../src", import.meta.url).pathname))).href;
const calls = Number(argument("--calls", "10000"));
const ROUNDS = 15;
const DELTA = 16;

const { AssistantMessageDraft } = (await import(`${source}/model/assistant-message-draft.ts`)) as { AssistantMessageDraft: typeof Draft };
const { MessageDeltaEncoder } = (await import(`${source}/protocol/message-delta.ts`)) as { MessageDeltaEncoder: typeof Encoder };
const { sessionFrameOf } = (await import(`${source}/server/rebuilt-update-frame.ts`)) as { sessionFrameOf: typeof frameOf };
const { mergeableUpdate } = (await import(`${source}/server/mergeable-update.ts`)) as { mergeableUpdate: typeof mergeable };

/** The session's event for a model event, as the agent publishes it. */
function agentEvent(event: ModelEvent): AgentEvent {
  if (event.type === "start") return { type: "message_start", message: event.partial };
  if (event.type === "done") return { type: "message_end", message: event.message };
  if (event.type === "error") return { type: "message_end", message: event.error };
  return { type: "message_update", message: event.partial, assistantMessageEvent: event };
}

const perEvent: number[] = [];
let bytes = 0;
let eventCount = 0;
// Kept, so the merged form is not optimized away.
let lastMergeable: unknown;
const text = smallCallArguments();
for (let round = 0; round < ROUNDS; round++) {
  (globalThis as { gc?: () => void }).gc?.();
  const started = performance.now();
  const draft = new AssistantMessageDraft({ api: "bench", provider: "bench", model: "bench", timestamp: 0 });
  const encoder = new MessageDeltaEncoder({ argumentsFromText: true });
  let seq = 0;
  bytes = 0;
  // Each event encoded as it is made, as the server does in the agent's synchronous pass.
  const publish = (events: readonly ModelEvent[]): void => {
    for (const event of events) {
      const { json, update } = sessionFrameOf(encoder, ++seq, agentEvent(event));
      bytes += json.length;
      if (update) lastMergeable = mergeableUpdate(update.event, encoder);
    }
  };
  publish(draft.start());
  for (let call = 0; call < calls; call++) {
    const { index, events } = draft.openToolCall(`call_${call}`, "write_file");
    publish(events);
    for (let offset = 0; offset < text.length; offset += DELTA) publish(draft.appendToolArguments(index, text.slice(offset, offset + DELTA)));
    publish(draft.close(index));
  }
  publish(draft.finish("toolUse"));
  eventCount = seq;
  perEvent.push(((performance.now() - started) * 1000) / seq);
}
void lastMergeable;
perEvent.sort((left, right) => left - right);
console.log(`${source}: ${calls} small calls in ${DELTA}-character deltas (${eventCount} events), ${ROUNDS} rounds; µs per event, draft and frames: median ${(perEvent[(ROUNDS - 1) / 2] as number).toFixed(2)}, lowest ${(perEvent[0] as number).toFixed(2)}; ${bytes} bytes of frames`);
