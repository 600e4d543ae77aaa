import { describe, expect, it } from "vitest";
import { SessionMirror } from "../../src/redis/session-mirror.js";
import type { AgentEvent } from "../../src/types.js";

const frame = (seq: number, event: AgentEvent) => ({ seq, type: event.type, json: JSON.stringify({ type: "event", seq, event }) });
const firstEnd: AgentEvent = { type: "agent_end", messages: [{ role: "user", content: "one", timestamp: 1 }], reason: "idle" };
const secondEnd: AgentEvent = { type: "agent_end", messages: [{ role: "user", content: "two", timestamp: 2 }], reason: "aborted" };

describe("SessionMirror snapshots", () => {
  it("carry the latest run's agent_end with its number: from the frames kept from the stream, then from frames applied, and none after a reset", () => {
    const mirror = new SessionMirror("s", "e", 0, [], 100);
    expect(mirror.snapshot().lastAgentEnd).toBeUndefined();
    mirror.keep([frame(1, { type: "agent_start" }), frame(2, firstEnd)]);
    expect(mirror.snapshot().lastAgentEnd).toStrictEqual({ seq: 2, event: firstEnd });
    mirror.applyJson(3, frame(3, { type: "agent_start" }).json);
    expect(mirror.snapshot()).toMatchObject({ seq: 3, lastAgentEnd: { seq: 2 } });
    mirror.applyJson(4, frame(4, secondEnd).json);
    expect(mirror.snapshot().lastAgentEnd).toStrictEqual({ seq: 4, event: secondEnd });
    mirror.reset(5, "f");
    expect(mirror.snapshot().lastAgentEnd).toBeUndefined();
  });
});
