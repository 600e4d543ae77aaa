import { describe, expect, it } from "vitest";
import { INTERRUPTED_TOOL_TEXT } from "../../../src/streams/transcript/repair-transcript.js";
import { reopenedResults, reopenedToolCalls } from "../../../src/streams/transcript/reopened-tool-calls.js";
import type { AgentMessage, PendingApproval, ToolResultMessage, TranscriptRecord } from "../../../src/types.js";
import { assistantMessage, toolCall, toolResultMessage, userMessage } from "../../testing/fixtures.js";

const [a, b, c] = [toolCall("a", "echo"), toolCall("b", "echo"), toolCall("c", "echo")];
const batch = assistantMessage([a, b, c]);
const transcript: AgentMessage[] = [userMessage("go"), batch, toolResultMessage(a, "A")];
const interrupted = (call: typeof a): ToolResultMessage => toolResultMessage(call, INTERRUPTED_TOOL_TEXT, { isError: true, timestamp: 9 });
const approval = (call: typeof a, since: number): PendingApproval => ({ toolCallId: call.id, toolName: call.name, args: {}, since });
const pending = (call: typeof a, since: number): TranscriptRecord => ({ type: "approval_pending", approval: approval(call, since) });
const settled = (call: typeof a): TranscriptRecord => ({ type: "approval_settled", toolCallId: call.id });
const finished = (call: typeof a, text: string): TranscriptRecord => ({ type: "tool_result", message: toolResultMessage(call, text) });

/** What each call of the batch without a result message gets: "waits since N", or its result text. */
function outcome(records: TranscriptRecord[], warnings: string[] = []): string[] | undefined {
  return reopenedToolCalls(transcript, records, 9, (warning) => warnings.push(warning))?.calls.map((call) =>
    call.approval ? `${call.toolCall.id} waits since ${call.approval.since}` : `${call.toolCall.id}: ${(call.result.content[0] as { text: string }).text}`,
  );
}

describe("reopenedToolCalls", () => {
  it.each<[string, TranscriptRecord[], string[] | undefined]>([
    ["no records: nothing to reopen (continue repairs as before)", [], undefined],
    ["a call waiting: it waits again; the others were running", [pending(b, 3)], ["b waits since 3", `c: ${INTERRUPTED_TOOL_TEXT}`]],
    ["a wait that ended (approved, then running): nothing waits", [pending(b, 3), settled(b)], undefined],
    ["a wait that ended and a result kept: the result, the rest interrupted", [pending(b, 3), settled(b), finished(c, "C")], [`b: ${INTERRUPTED_TOOL_TEXT}`, "c: C"]],
    ["a call reopened once already (its record written twice): one wait, the first since", [pending(b, 3), finished(c, "C"), pending(b, 3)], ["b waits since 3", "c: C"]],
    ["a record for a call that has its result message: moot", [pending(a, 1)], undefined],
  ])("%s", (_name, records, expected) => {
    expect(outcome(records)).toStrictEqual(expected);
  });

  it("the interrupted result is the one continue() gives", () => {
    expect(reopenedToolCalls(transcript, [pending(b, 3)], 9, () => undefined)?.calls[1]).toStrictEqual({ toolCall: c, result: interrupted(c) });
  });

  it("warns of records for calls the last assistant message does not have, and ignores them", () => {
    const warnings: string[] = [];
    expect(outcome([pending(toolCall("x", "echo"), 1)], warnings)).toBeUndefined();
    expect(warnings).toStrictEqual(['The store holds a record (approval_pending) for tool call "x", which the transcript\'s last assistant message does not have; ignored.']);
  });
});

describe("reopenedResults", () => {
  const reopen = (records: TranscriptRecord[]) => reopenedToolCalls(transcript, records, 9, () => undefined)!;

  it("gives every call's result, in call order, when none waits (the next run starts with them)", () => {
    expect(reopenedResults(reopen([pending(b, 3), settled(b), finished(c, "C")]))).toStrictEqual([interrupted(b), toolResultMessage(c, "C")]);
  });

  it("gives nothing when a call waits (the run is reopened instead)", () => {
    expect(reopenedResults(reopen([pending(b, 3), finished(c, "C")]))).toBeUndefined();
  });
});
