/**
 * Whatever a browser posts to the chat handler (any JSON, useChat's body with fields of any type,
 * commands with fields of any type), over a real HTTP server: every request gets a status the
 * handler documents with a plain-text reason or the UI message stream, never a 500 (createAgent
 * here always succeeds), and the server goes on serving (property-based).
 */
import fc from "fast-check";
import { asyncScheduler } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { chatBody, chunksOf, finalMessage, postJson, startChatServer } from "./chat-server.js";
import { maybe } from "../helpers/arbitrary-json.js";

const chatId = fc.oneof(fc.constantFrom("c1", "c2", "a.b:c-d_e", "", "..", "../etc", "c".repeat(129), "é"), fc.string({ maxLength: 8 }));
const part = fc.record({ type: maybe(fc.constantFrom("text", "file", "step-start")), text: maybe(fc.string({ maxLength: 8 })), url: maybe(fc.constant("data:,x")) }, { requiredKeys: [] });
const message = fc.record({ id: maybe(fc.string({ maxLength: 4 })), role: maybe(fc.constantFrom("user", "assistant", "system")), parts: maybe(fc.array(maybe(part), { maxLength: 3 })) }, { requiredKeys: [] });
const chatRequest = fc.record(
  {
    id: maybe(chatId),
    messages: maybe(fc.array(maybe(message), { maxLength: 3 })),
    trigger: maybe(fc.constantFrom("submit-message", "regenerate-message", "x".repeat(5000))),
    messageId: maybe(fc.string({ maxLength: 4 })),
  },
  { requiredKeys: [] },
);
const command = fc.record(
  {
    type: maybe(fc.constantFrom("steer", "follow_up", "approve", "deny", "abort", "nope")),
    text: maybe(fc.string({ maxLength: 8 })),
    toolCallId: maybe(fc.oneof(fc.constantFrom("call_1", ""), fc.string({ maxLength: 300 }))),
    reason: maybe(fc.string({ maxLength: 8 })),
  },
  { requiredKeys: [] },
);
const anyJson = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value));
const notJson = fc.constantFrom("", "{", "not json", "[".repeat(10_000), '{"id": "c1", "messages": [');
const chatPost = fc.record({ path: fc.constant("/api/chat"), body: fc.oneof({ weight: 5, arbitrary: chatRequest.map((body) => JSON.stringify(body)) }, { weight: 1, arbitrary: anyJson }, { weight: 1, arbitrary: notJson }) });
const commandPost = fc.record({
  path: fc.constantFrom("/api/chat/c1/commands", "/api/chat/c2/commands", "/api/chat/none/commands"),
  body: fc.oneof({ weight: 5, arbitrary: command.map((body) => JSON.stringify(body)) }, { weight: 1, arbitrary: anyJson }, { weight: 1, arbitrary: notJson }),
});

/** What the handler answers, and with what body: the stream (200), nothing (204), or a reason (4xx). */
const DOCUMENTED = [200, 204, 400, 404, 409, 413];

describe("a browser that posts arbitrary bodies to the chat handler (property-based)", () => {
  let server: Awaited<ReturnType<typeof startChatServer>>;
  beforeAll(async () => {
    server = await startChatServer({ maxBodyBytes: 20_000, createAgent: () => new Agent({ model: scriptedModel(["fine"], { scheduler: asyncScheduler }) }) });
  });
  afterAll(() => server.close());

  it("answers each with a documented status and a reason, or the stream, and keeps serving", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(chatPost, commandPost), { minLength: 1, maxLength: 6 }), async (posts) => {
        for (const { path, body } of posts) {
          const response = await postJson(`${server.url}${path}`, body);
          const text = await response.text();
          expect(DOCUMENTED, `${response.status} ${text} for ${body.slice(0, 200)}`).toContain(response.status);
          if (response.status >= 400) {
            expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
            expect(text.length).toBeGreaterThan(0);
            // A reason quotes at most a short piece of what was sent.
            expect(text.length).toBeLessThan(500);
          }
          if (response.status === 200) expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
    const reply = await finalMessage(await chunksOf(await postJson(`${server.url}/api/chat`, chatBody("after-all", "hi"))));
    expect(reply.parts).toStrictEqual([{ type: "step-start" }, { type: "text", text: "fine", state: "done" }]);
  });
});
