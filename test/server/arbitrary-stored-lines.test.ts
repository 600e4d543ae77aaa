/**
 * A transcript file holding anything (property-based): lines that are messages, message-shaped
 * records with fields of any kind, records, JSON that is no message, text that is not JSON, torn
 * lines. `Agent.open` gives an agent that keeps what it can, warns about the rest, and runs: a
 * prompt ends with `agent_end`, and the transcript it then holds can be written out and loaded
 * again.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/index.js";
import { JsonlTranscriptStore } from "../../src/server/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { maybe } from "../helpers/arbitrary-json.js";

const block = fc.record(
  {
    type: maybe(fc.constantFrom("text", "image", "thinking", "toolCall")),
    text: maybe(fc.string({ maxLength: 5 })),
    thinking: maybe(fc.string({ maxLength: 5 })),
    data: maybe(fc.constant("iVBORw0KGgo=")),
    mimeType: maybe(fc.constant("image/png")),
    id: maybe(fc.constantFrom("c1", "c2", "")),
    name: maybe(fc.constantFrom("echo", "")),
    arguments: maybe(fc.jsonValue({ maxDepth: 2 })),
  },
  { requiredKeys: [] },
);
const message = fc.record(
  {
    role: maybe(fc.constantFrom("user", "assistant", "toolResult", "custom")),
    content: maybe(fc.oneof(fc.string({ maxLength: 5 }), fc.array(maybe(block), { maxLength: 3 }))),
    timestamp: maybe(fc.integer({ min: 0, max: 10 })),
    toolCallId: maybe(fc.constantFrom("c1", "c2")),
    toolName: maybe(fc.constantFrom("echo", "")),
    isError: maybe(fc.boolean()),
    stopReason: maybe(fc.constantFrom("stop", "toolUse", "error", "aborted")),
    usage: maybe(fc.record({ input: maybe(fc.integer()), totalTokens: maybe(fc.integer()) }, { requiredKeys: [] })),
    api: fc.constant("test"),
    provider: fc.constant("test"),
    model: fc.constant("test"),
  },
  { requiredKeys: [] },
);
const approval = fc.record({ toolCallId: maybe(fc.constantFrom("c1", "c2")), toolName: maybe(fc.constantFrom("echo", "deploy")), args: maybe(fc.jsonValue({ maxDepth: 2 })), since: maybe(fc.integer({ min: 0, max: 9 })) }, { requiredKeys: [] });
const record = fc.record(
  {
    type: maybe(fc.constantFrom("approval_pending", "approval_settled", "settings", "nope")),
    approval: maybe(approval),
    toolCallId: maybe(fc.constantFrom("c1", "c2")),
    settings: maybe(fc.record({ thinkingLevel: maybe(fc.constantFrom("off", "low", "high")), systemPrompt: maybe(fc.string({ maxLength: 5 })) }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);
const line = fc.oneof(
  { weight: 6, arbitrary: message.map((each) => JSON.stringify(each)) },
  { weight: 1, arbitrary: record.map((each) => JSON.stringify({ rxagent: each })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((each) => JSON.stringify(each)) },
  { weight: 1, arbitrary: fc.constantFrom("", "{", "not json", '{"role":"user","content":"torn', "[".repeat(5_000)) },
);

describe("a transcript file that holds anything, opened by Agent.open (property-based)", () => {
  it("gives an agent that keeps what it can and runs", async () => {
    const folder = mkdtempSync(join(tmpdir(), "rxagent-arbitrary-store-"));
    let file = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 8 }), async (lines) => {
        const path = join(folder, `transcript-${file++}.jsonl`);
        writeFileSync(path, lines.join("\n"));
        const warnings: string[] = [];
        const store = new JsonlTranscriptStore(path, { onWarning: (warning) => warnings.push(warning) });
        const agent = await Agent.open({ model: scriptedModel(["answer"]), store });
        const events = await lastValueFrom(agent.prompt("go").pipe(toArray()));
        expect(events.at(-1)?.type).toBe("agent_end");
        expect(() => JSON.stringify(agent.messages)).not.toThrow();
        const reopened = await Agent.open({ model: scriptedModel(["again"]), store: new JsonlTranscriptStore(path, { onWarning: () => undefined }) });
        expect(JSON.parse(JSON.stringify(reopened.messages))).toStrictEqual(JSON.parse(JSON.stringify(agent.messages)));
      }),
      { numRuns: 100 },
    );
  });
});
