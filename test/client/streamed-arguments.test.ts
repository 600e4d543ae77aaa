import { Observable, Subject } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Agent } from "../../src/agent/agent.js";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { connectAgent, type AgentClient } from "../../src/client/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import type { AckFrame, ServerFrame } from "../../src/protocol/protocol-schemas.js";
import type { AgentEvent, Model, ModelEvent } from "../../src/types.js";
import { waitFor } from "../server/helpers.js";

const RECORDS = Array.from({ length: 1_500 }, (_unused, id) => ({ id, name: `item ${id}`, tags: ["a", "b"], done: id % 2 === 0 }));
/** About 90 KB of arguments, streamed in 512-character fragments. */
const ARGUMENTS = JSON.stringify({ path: "notes.txt", content: "lorem ipsum dolor ".repeat(1_500), records: RECORDS });
const FRAGMENT = 512;

/**
 * One tool call of `ARGUMENTS` through the draft, 8 events per macrotask; halfway it waits for
 * `resume` (a client attaches then), and the next turn answers "done".
 */
function streamingModel(resume: Subject<void>, pause: { reached: boolean }): Model {
  let calls = 0;
  return {
    id: "m",
    provider: "p",
    api: "a",
    stream: () =>
      new Observable<ModelEvent>((subscriber) => {
        const draft = new AssistantMessageDraft({ api: "a", provider: "p", model: "m", timestamp: 1 });
        const first = calls++ === 0;
        const events: ModelEvent[] = [...draft.start()];
        let pauseAt = -1;
        if (first) {
          const { index, events: opened } = draft.openToolCall("c1", "write_file");
          events.push(...opened);
          for (let offset = 0; offset < ARGUMENTS.length; offset += FRAGMENT) {
            if (offset >= ARGUMENTS.length / 2 && pauseAt < 0) pauseAt = events.length;
            events.push(...draft.appendToolArguments(index, ARGUMENTS.slice(offset, offset + FRAGMENT)));
          }
          events.push(...draft.close(index), ...draft.finish("toolUse"));
        } else {
          const { index, events: opened } = draft.openText();
          events.push(...opened, ...draft.appendText(index, "done"), ...draft.finish("stop"));
        }
        let position = 0;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const emit = (): void => {
          for (let count = 0; count < 8; count++) {
            if (position === pauseAt) {
              pauseAt = -1;
              pause.reached = true;
              const waiting = resume.subscribe(() => {
                waiting.unsubscribe();
                timer = setTimeout(emit, 0);
              });
              return;
            }
            const event = events[position++];
            if (event === undefined) return subscriber.complete();
            subscriber.next(event);
          }
          timer = setTimeout(emit, 0);
        };
        timer = setTimeout(emit, 0);
        return () => clearTimeout(timer);
      }),
  };
}

let server: AgentServer | undefined;
const clients: AgentClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await server?.close();
  server = undefined;
});

function collect(client: AgentClient): { events: AgentEvent[]; frames: ServerFrame[] } {
  const seen = { events: [] as AgentEvent[], frames: [] as ServerFrame[] };
  client.events$.subscribe((event) => seen.events.push(event));
  client.frames$.subscribe((frame) => seen.frames.push(frame));
  return seen;
}

describe("streamed tool arguments over protocol 3", () => {
  it("give connectAgent the agent's very events and state, for a client there from the start and one that attached mid-call, the replies' ends as end frames", async () => {
    const resume = new Subject<void>();
    const pause = { reached: false };
    let agent: Agent | undefined;
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, protocol: 3, createAgent: () => (agent = new Agent({ model: streamingModel(resume, pause) })) });
    const early = connectAgent(server.url, { session: "s", WebSocket, reconnect: false });
    clients.push(early);
    const fromStart = collect(early);
    await early.ready;
    const local: AgentEvent[] = [];
    agent?.events$.subscribe((event) => local.push(event));

    await early.prompt("write it");
    await waitFor(() => pause.reached, "the call to stream halfway");
    const late = connectAgent(server.url, { session: "s", WebSocket, reconnect: false });
    clients.push(late);
    const fromMiddle = collect(late);
    await late.ready;
    const snapshot = await waitFor(() => fromMiddle.frames.find((frame) => frame.type === "snapshot"), "the late client's snapshot");
    const joinedAt = local.length;
    resume.next();
    await waitFor(() => fromStart.events.some((event) => event.type === "agent_end") && fromMiddle.events.some((event) => event.type === "agent_end"), "agent_end at both clients");

    // The snapshot came mid-call, with the text streamed so far.
    expect(snapshot.type === "snapshot" && snapshot.argumentTexts?.[0]?.text.length).toBeGreaterThan(ARGUMENTS.length / 3);
    expect((fromStart.frames.find((frame) => frame.type === "ack") as AckFrame).protocol).toBe(3);
    expect(fromStart.events).toEqual(local);
    expect(fromMiddle.events).toEqual(local.slice(joinedAt));
    expect(early.state).toEqual(agent?.state);
    expect(late.state).toEqual(agent?.state);
    // The arguments crossed the wire as the deltas only: no update re-sent them.
    const updates = fromStart.frames.filter((frame) => frame.type === "update");
    expect(updates.some((frame) => frame.patch?.some((operation) => "k" in operation && operation.k === "arguments" && "v" in operation))).toBe(false);
    // Nor did the replies' ends: each is an `end` frame patching what the client holds.
    const ends = fromStart.frames.filter((frame) => frame.type === "end");
    expect(ends).toHaveLength(2);
    expect(fromStart.frames.some((frame) => frame.type === "event" && frame.event.type === "message_end" && frame.event.message.role === "assistant")).toBe(false);
    expect(Math.max(...ends.map((frame) => JSON.stringify(frame).length))).toBeLessThan(1_000);
  });
});
