/**
 * Whatever a client sends (any JSON, commands with fields of any type, ids of any kind), over a
 * real socket: the server answers every frame that has a usable id (1 to 64 characters) with one `ack` or `error`,
 * or closes the socket with a code it documents, and keeps serving other clients (property-based).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { RawClient, realtimeAgent, waitFor } from "./helpers.js";

const junk = fc.oneof(fc.constant(null), fc.integer(), fc.double(), fc.string({ maxLength: 6 }), fc.boolean(), fc.constant({}), fc.constant([]), fc.constant("x".repeat(300)));
const maybe = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 4, arbitrary }, { weight: 1, arbitrary: junk });
const session = fc.oneof(fc.constantFrom("s1", "s2", "a.b:c-d_e", "", "../etc", "s".repeat(129), "é"), fc.string({ maxLength: 8 }));
const image = fc.record({ type: maybe(fc.constant("image")), data: maybe(fc.constantFrom("iVBORw0KGgo=", "", "%%%")), mimeType: maybe(fc.constantFrom("image/png", "text/html", "")) }, { requiredKeys: [] });
const input = fc.oneof(fc.string({ maxLength: 8 }), fc.record({ text: maybe(fc.string({ maxLength: 8 })), images: maybe(fc.array(maybe(image), { maxLength: 2 })) }, { requiredKeys: [] }), junk);
const command = fc.record(
  {
    type: maybe(fc.constantFrom("attach", "prompt", "steer", "follow_up", "abort", "cancel_tool", "approve", "deny", "continue", "reset", "detach", "nope")),
    session: maybe(session),
    lastSeq: maybe(fc.oneof(fc.integer({ min: -5, max: 50 }), fc.constantFrom(2 ** 53, 1e300, -0, 0.5))),
    epoch: maybe(fc.string({ maxLength: 8 })),
    input: maybe(input),
    toolCallId: maybe(fc.oneof(fc.constantFrom("call_1", ""), fc.string({ maxLength: 300 }))),
    reason: maybe(fc.string({ maxLength: 8 })),
    clearFollowUps: maybe(fc.boolean()),
    extra: maybe(fc.string({ maxLength: 4 })),
  },
  { requiredKeys: [] },
);
/** A frame as sent: a command with an id of any kind, or any JSON at all. */
const frame = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(maybe(fc.string({ minLength: 1, maxLength: 8 })), command).map(([id, body]) => JSON.stringify({ ...body, id })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: fc.constantFrom("", "{", "not json", "[".repeat(10_000)) },
);

/** Close codes the server documents: too big (1009), policy (1008: refusals in a row, unread replies), idle (4000). */
const DOCUMENTED_CLOSES = [1008, 1009, 4000];

describe("a client that sends arbitrary frames (property-based)", () => {
  let server: AgentServer;
  beforeAll(async () => {
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, rateLimit: false, createAgent: () => realtimeAgent(["Hi there."], 1) });
  });
  afterAll(() => server.close());

  it("answers each command that has an id once, or closes with a documented code, and keeps serving", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 12 }), async (frames) => {
        const client = await RawClient.open(server.url);
        try {
          for (const text of frames) client.socket.send(text);
          const ids = frames.flatMap((text) => {
            try {
              const id = (JSON.parse(text) as { id?: unknown } | null)?.id;
              // The server echoes an id of 1 to 64 characters; an error about a frame with another has none.
              return typeof id === "string" && id !== "" && id.length <= 64 ? [id] : [];
            } catch {
              return [];
            }
          });
          const replied = (id: string) => client.frames.filter((reply) => (reply.type === "ack" || reply.type === "error") && reply.id === id).length;
          await waitFor(() => client.closeCode !== undefined || ids.every((id) => replied(id) >= 1), `replies to ${JSON.stringify(frames)}`);
          if (client.closeCode !== undefined) {
            expect(DOCUMENTED_CLOSES).toContain(client.closeCode);
          } else {
            // An id repeated in the frames is answered once per frame; each other id once.
            for (const id of new Set(ids)) expect([id, replied(id)]).toStrictEqual([id, ids.filter((other) => other === id).length]);
          }
        } finally {
          await client.close();
        }
        const probe = await RawClient.open(server.url);
        try {
          expect(await probe.request({ type: "attach", session: "probe" })).toMatchObject({ type: "ack" });
        } finally {
          await probe.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
