import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { ClientConnection } from "../../src/server/client-connection.js";
import { RecordingSocket } from "./helpers.js";
import { type EventLog, type LoggedFrame, MemoryEventLog } from "../../src/server/event-log.js";
import { RebuiltUpdateFrame, updateFrameJson } from "../../src/server/rebuilt-update-frame.js";
import { SessionHub } from "../../src/server/session-hub.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";


describe("the session log keeps delta frames as their parts", () => {
  it("holds a long text or argument delta's frame unserialized, and a resuming client reads the bytes a live one got", async () => {
    // A log that does not merge a message's updates once it ended (`merge` is optional): every frame stays.
    const memory = new MemoryEventLog("epoch");
    const log: EventLog = {
      get epoch() {
        return memory.epoch;
      },
      get oldestSeq() {
        return memory.oldestSeq;
      },
      append: (frame) => memory.append(frame),
      read: (seq) => memory.read(seq),
      reset: (seq, epoch) => memory.reset(seq, epoch),
    };
    const agent = new Agent({
      model: scriptedModel([`Hello there, ${"how are you? ".repeat(40)}`, { content: [{ type: "toolCall", name: "missing", arguments: { path: "notes.txt", lines: Array.from({ length: 200 }, (_unused, line) => line) } }] }], { chunkSize: 200 }),
    });
    const hub = new SessionHub("s", agent, {}, log, 3);
    const live = new RecordingSocket();
    hub.attach(new ClientConnection(live, () => "{}"), 0);

    await agent.prompt("hi");
    await agent.waitForIdle();
    const resumed = new RecordingSocket();
    hub.attach(new ClientConnection(resumed, () => "{}"), 0);

    expect(resumed.sent).toStrictEqual(live.sent);
    const frames = Array.from({ length: hub.lastSeq }, (_unused, index) => log.read(index + 1) as LoggedFrame);
    const rebuilt = frames.filter((frame) => frame instanceof RebuiltUpdateFrame);
    const deltas = live.sent.filter((json) => /"type":"(text|toolcall)_delta"/.test(json));
    expect(deltas.length).toBeGreaterThan(1);
    expect(rebuilt.map((frame) => frame.json)).toEqual(expect.arrayContaining(deltas));
    for (const frame of rebuilt) expect(frame.jsonLength).toBe(frame.json.length);
    hub.close();
  });

  it("keeps a short delta's frame, or one whose patch carries a value or a block, as its JSON (larger as objects)", () => {
    const event = { type: "toolcall_delta" as const, contentIndex: 0, delta: "x".repeat(128) };
    expect(RebuiltUpdateFrame.suits({ type: "update", event })).toBe(true);
    expect(RebuiltUpdateFrame.suits({ type: "update", event: { ...event, delta: "x".repeat(127) } })).toBe(false);
    expect(RebuiltUpdateFrame.suits({ type: "update", event: { type: "toolcall_end", contentIndex: 0 } })).toBe(false);
    expect(RebuiltUpdateFrame.suits({ type: "update", event, patch: [{ i: 0, k: "arguments", j: 1 }, { i: 0, k: "text", a: "more" }] })).toBe(true);
    expect(RebuiltUpdateFrame.suits({ type: "update", event, patch: [{ i: 0, k: "arguments", v: { path: "a" } }] })).toBe(false);
    expect(RebuiltUpdateFrame.suits({ type: "update", event, patch: [{ i: 1, b: { type: "text", text: "" } }] })).toBe(false);
    const frame = new RebuiltUpdateFrame(7, { type: "update", event }, 3);
    expect(frame.json).toBe(updateFrameJson(7, { type: "update", event }));
    expect(JSON.parse(frame.json)).toStrictEqual({ type: "update", seq: 7, event });
  });

  it("counts a rebuilt frame's bytes by its length, without serializing it", () => {
    const log = new MemoryEventLog("epoch", { maxBytes: 100 });
    const unread = (seq: number): LoggedFrame => ({
      seq,
      type: "message_update",
      jsonLength: 40,
      get json(): string {
        throw new Error("serialized to be counted");
      },
    });
    for (let seq = 1; seq <= 5; seq++) log.append(unread(seq));
    // 100 characters hold two frames of 40: 4 and 5.
    expect(log.oldestSeq).toBe(3);
    expect(log.read(3)?.seq).toBeUndefined();
    expect(log.read(4)?.seq).toBe(4);
  });
});
