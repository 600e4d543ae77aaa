/**
 * A server that sends anything (property-based): after a proper attach, frames of every server
 * type with fields of any kind, any JSON, text that is not JSON, fragments that never end. The
 * client never throws out of the socket's handler, its `state` and streams stay readable (no
 * error notification), and a proper snapshot afterwards brings it back on track.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { initialAgentState } from "../../src/agent/agent-state.js";
import { connectAgent } from "../../src/client/index.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AgentEvent } from "../../src/types.js";
import { ScriptedSocket } from "./scripted-socket.js";
import { junk, maybe } from "../helpers/arbitrary-json.js";

const usage = emptyUsage();
const message = fc.record(
  {
    role: maybe(fc.constantFrom("assistant", "user", "toolResult")),
    content: maybe(fc.array(maybe(fc.record({ type: maybe(fc.constantFrom("text", "toolCall", "thinking")), text: maybe(fc.string({ maxLength: 4 })), id: maybe(fc.string({ maxLength: 3 })), arguments: maybe(fc.jsonValue({ maxDepth: 2 })) }, { requiredKeys: [] })), { maxLength: 3 })),
    usage: maybe(fc.constant(usage)),
    stopReason: maybe(fc.constantFrom("stop", "toolUse")),
    timestamp: maybe(fc.integer()),
  },
  { requiredKeys: [] },
);
const eventTypes = ["agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update", "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end", "nope"];
const event = fc.record(
  {
    type: maybe(fc.constantFrom(...eventTypes)),
    message: maybe(message),
    messages: maybe(fc.array(maybe(message), { maxLength: 2 })),
    toolCallId: maybe(fc.string({ maxLength: 3 })),
    assistantMessageEvent: maybe(fc.record({ type: maybe(fc.constantFrom("text_delta", "toolcall_delta", "start", "done")), contentIndex: maybe(fc.integer({ min: -1, max: 3 })), delta: maybe(fc.string({ maxLength: 4 })) }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);
const patch = fc.array(maybe(fc.record({ op: maybe(fc.constantFrom("a", "s", "j", "r", "x")), i: maybe(fc.integer({ min: -1, max: 3 })), k: maybe(fc.string({ maxLength: 3 })), v: maybe(fc.jsonValue({ maxDepth: 2 })) }, { requiredKeys: [] })), { maxLength: 3 });
const seq = maybe(fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constantFrom(-1, 2 ** 53, 0.5)));
const frame = fc.oneof(
  fc.record({ type: fc.constant("event"), seq, first: maybe(fc.integer({ min: 0, max: 12 })), event: maybe(event) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("update"), seq, event: maybe(event.map((each) => each.assistantMessageEvent)), patch: maybe(patch), message: maybe(message), argumentTexts: maybe(fc.array(junk, { maxLength: 2 })) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("end"), seq, patch: maybe(patch) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("snapshot"), session: maybe(fc.constantFrom("s", "other")), seq, epoch: maybe(fc.constantFrom("e", "f")), state: maybe(fc.record({ messages: maybe(fc.array(maybe(message), { maxLength: 2 })), isStreaming: maybe(fc.boolean()) }, { requiredKeys: [] })), lastAgentEnd: maybe(fc.record({ seq, event: maybe(event) })) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("ack"), id: maybe(fc.string({ maxLength: 4 })), session: maybe(fc.string({ maxLength: 3 })), resume: maybe(fc.constantFrom("replay", "snapshot")), epoch: maybe(fc.string({ maxLength: 2 })), protocol: maybe(fc.integer({ min: 0, max: 5 })) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("error"), id: maybe(fc.string({ maxLength: 4 })), code: maybe(fc.constantFrom("invalid_frame", "session_moved", "internal")), message: maybe(fc.string({ maxLength: 6 })) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("fragment"), data: maybe(fc.string({ maxLength: 6 })), final: maybe(fc.constant(true)) }, { requiredKeys: ["type"] }),
);
const text = fc.oneof({ weight: 8, arbitrary: frame.map((each) => JSON.stringify(each)) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((each) => JSON.stringify(each)) }, { weight: 1, arbitrary: fc.constantFrom("", "{", "not json", "[".repeat(10_000)) });

async function attachedClient() {
  const client = connectAgent("ws://scripted", { WebSocket: ScriptedSocket, session: "s", reconnect: false });
  const failures: unknown[] = [];
  const seen: AgentEvent[] = [];
  client.events$.subscribe({ next: (each) => seen.push(each), error: (error: unknown) => failures.push(error) });
  client.state$.subscribe({ error: (error: unknown) => failures.push(error) });
  await new Promise<void>((resolve) => queueMicrotask(resolve));
  const socket = ScriptedSocket.last!;
  const lastAttach = () => socket.sent.filter((sent) => sent.type === "attach").at(-1) as { id: string };
  const resync = (seqNumber: number) => {
    socket.serve({ type: "ack", id: lastAttach().id, session: "s", epoch: "e", protocol: 3, resume: "snapshot" });
    socket.serve({ type: "snapshot", session: "s", seq: seqNumber, epoch: "e", state: initialAgentState([]) });
  };
  resync(0);
  await client.ready;
  return { client, socket, failures, seen, resync };
}

describe("a server that sends arbitrary frames, read by connectAgent (property-based)", () => {
  it("never throws out of the socket's handler, keeps its streams and state readable, and a snapshot brings it back", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 10 }), async (texts) => {
        const { client, socket, failures, seen, resync } = await attachedClient();
        try {
          for (const each of texts) {
            expect(() => socket.emitRaw(each)).not.toThrow();
            expect(() => JSON.stringify(client.state)).not.toThrow();
          }
          expect(failures).toStrictEqual([]);
          // Back on track: a fresh snapshot, then a message that streams and ends as usual.
          resync(100);
          seen.length = 0;
          const assistant = { role: "assistant" as const, content: [], api: "a", provider: "p", model: "m", usage: emptyUsage(), stopReason: "stop" as const, timestamp: 1 };
          socket.serve({ type: "event", seq: 101, event: { type: "message_start", message: assistant } });
          socket.serve({ type: "end", seq: 102 });
          expect(seen.map((each) => each.type)).toStrictEqual(["message_start", "message_end"]);
          expect(client.lastSeq).toBe(102);
        } finally {
          client.close();
        }
      }),
      { numRuns: 300 },
    );
  });
});
