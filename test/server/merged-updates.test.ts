import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { MessageDeltaDecoder } from "../../src/protocol/message-delta-decoder.js";
import type { ServerFrame } from "../../src/protocol/protocol-schemas.js";
import { ClientConnection } from "../../src/server/client-connection.js";
import { RecordingSocket } from "./helpers.js";
import { type LoggedFrame, MemoryEventLog } from "../../src/server/event-log.js";
import { MergedUpdateFrame } from "../../src/server/rebuilt-update-frame.js";
import { SessionHub } from "../../src/server/session-hub.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentEvent, AssistantMessage } from "../../src/types.js";
import { emptyUsage } from "../../src/types/messages.js";

/** The events the frames stand for, decoded as `connectAgent` does. */
function decoded(frames: ServerFrame[]): AgentEvent[] {
  const decoder = new MessageDeltaDecoder();
  return frames.flatMap((frame): AgentEvent[] => {
    if (frame.type === "update") return [decoder.decode(frame)];
    if (frame.type === "end") return [decoder.end(frame)];
    if (frame.type !== "event") return [];
    decoder.observe(frame.event);
    return [frame.event];
  });
}

const empty: AssistantMessage = { role: "assistant", content: [], api: "a", provider: "p", model: "m", usage: emptyUsage(), stopReason: "stop", timestamp: 1 };
const length10 = (seq: number): LoggedFrame => ({ seq, type: "message_update", json: `{"seq":${seq}}`, jsonLength: 10 });

describe("a streamed message's updates, merged in the session's log once it ended", () => {
  it("a client resuming from before the message reads one merged update carrying the whole message; one resuming inside it reads on from its next number", async () => {
    const log = new MemoryEventLog("epoch");
    const agent = new Agent({
      model: scriptedModel([{ content: [{ type: "text", text: `Hello there, ${"how are you? ".repeat(40)}` }, { type: "toolCall", name: "missing", arguments: { path: "notes.txt", lines: [1, 2, 3] } }] }], { chunkSize: 20 }),
    });
    const hub = new SessionHub("s", agent, {}, log);
    const live = new RecordingSocket();
    hub.attach(new ClientConnection(live, () => "{}"), 0);
    await agent.prompt("hi");
    await agent.waitForIdle();

    const liveFrames = live.frames();
    const updates = liveFrames.filter((frame) => frame.type === "update");
    const first = updates[0]?.seq ?? 0;
    const last = updates.at(-1)?.seq ?? 0;
    expect(last - first).toBeGreaterThan(20);
    // The log holds one frame for the range, in every slot of it.
    expect(log.read(first)).toBeInstanceOf(MergedUpdateFrame);
    expect(log.read(last)).toBeInstanceOf(MergedUpdateFrame);

    const fromStart = new RecordingSocket();
    hub.attach(new ClientConnection(fromStart, () => "{}"), 0);
    const resumedFrames = fromStart.frames();
    expect(resumedFrames.filter((frame) => frame.type === "update")).toStrictEqual([{ type: "update", seq: last, first, event: updates.at(-1)?.event, message: expect.anything() }]);
    // The same events, the message's updates as one: the last, with the message whole.
    const liveEvents = decoded(liveFrames);
    const resumedEvents = decoded(resumedFrames);
    const withoutUpdates = (events: AgentEvent[]) => events.filter((event) => event.type !== "message_update");
    expect(withoutUpdates(resumedEvents)).toStrictEqual(withoutUpdates(liveEvents));
    expect(resumedEvents.filter((event) => event.type === "message_update")).toStrictEqual([liveEvents.findLast((event) => event.type === "message_update")]);

    const inside = new RecordingSocket();
    hub.attach(new ClientConnection(inside, () => "{}"), first + 3);
    expect(inside.frames()[0]).toMatchObject({ type: "update", seq: last, first: first + 4 });
    expect(decoded(inside.frames()).slice(1)).toStrictEqual(resumedEvents.slice(resumedEvents.findIndex((event) => event.type === "message_update") + 1));
    expect(hub.resumeMode(first + 3)).toBe("replay");
    hub.close();
  });

  it("counts a merged frame as the bytes it replaced, once, and lets it go with the last number of its range", () => {
    const log = new MemoryEventLog("epoch", { maxBytes: 100 });
    for (let seq = 1; seq <= 10; seq++) log.append(length10(seq));
    const measured: number[] = [];
    log.merge(2, 9, (jsonLength) => (measured.push(jsonLength), new MergedUpdateFrame(9, 2, { type: "text_delta" }, empty, [], jsonLength)));
    expect(measured).toStrictEqual([80]);
    // Still 100 bytes: the next frame evicts the oldest alone.
    log.append(length10(11));
    expect(log.oldestSeq).toBe(1);
    expect(JSON.parse(log.read(5)?.json ?? "")).toMatchObject({ type: "update", seq: 9, first: 5 });
    // The next takes the whole range with it (its 80 bytes leave with its last number), and no more.
    log.append(length10(12));
    expect(log.oldestSeq).toBe(9);
    expect(log.read(10)?.seq).toBe(10);
  });

  it("merges nothing when the range's start is no longer held, or it is not all appended", () => {
    const log = new MemoryEventLog("epoch", { maxEvents: 5 });
    for (let seq = 1; seq <= 8; seq++) log.append(length10(seq));
    const merged = (seq: number, first: number) => (jsonLength: number) => new MergedUpdateFrame(seq, first, { type: "text_delta" }, empty, [], jsonLength);
    log.merge(2, 6, merged(6, 2));
    log.merge(5, 9, merged(9, 5));
    for (let seq = 4; seq <= 8; seq++) expect(log.read(seq)?.json).toBe(`{"seq":${seq}}`);
  });
});
