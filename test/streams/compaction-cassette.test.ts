import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteModel } from "../../src/testing/cassette-model.js";
import { readCassette } from "../../src/testing/node/cassette-file.js";
import type { AssistantMessage } from "../../src/types.js";
import { questions, runCompactedSession } from "../helpers/compacted-session.js";

const cassette = readCassette(join(import.meta.dirname, "../fixtures/cassettes/compacted-session.cassette.jsonl"));

describe("compaction on a long cassette (twelve questions on the demo model, recorded with compaction)", () => {
  it("replays every call with the request recorded: the model saw the same compacted context each time", async () => {
    const model = cassetteModel(cassette, { speed: Infinity });
    const agent = await runCompactedSession(model, mkdtempSync(join(tmpdir(), "rxagent-compaction-cassette-")));
    const messages = agent.state.messages;
    const answers = messages.filter((message): message is AssistantMessage => message.role === "assistant");
    // A request that differs from the recording ends its call as an error message listing the differences.
    expect(answers.filter((answer) => answer.stopReason === "error").map((answer) => answer.errorMessage)).toStrictEqual([]);
    expect([model.calls, cassette.calls.length, answers.length]).toStrictEqual([24, 24, 24]);
    expect(answers.filter((answer) => answer.stopReason === "stop")).toHaveLength(questions.length);
    expect(messages.filter((message) => message.role === ("compactionSummary" as string))).toHaveLength(13);
  });

  it("sent the model a context that stopped growing once compaction began, a question's first call included (the transcript grew to 61 messages)", () => {
    // Without compaction the n-th call would carry 2n - 1 messages, 47 at the end.
    expect(cassette.calls.map((call) => call.request.messages.length)).toStrictEqual([1, 3, 5, 7, 9, 5, 7, 9, 5, 7, 5, 7, 5, 7, 5, 5, 7, 5, 5, 5, 5, 5, 5, 5]);
    expect(String(cassette.calls.at(-1)!.request.messages[0]!.content)).toMatch(/^The conversation so far was compacted/);
  });
});
