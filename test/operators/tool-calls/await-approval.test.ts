import { Type } from "@sinclair/typebox";
import type { Observable } from "rxjs";
import type { Context } from "rxjs-marbles";
import { describe, it } from "vitest";
import { executeToolCalls } from "../../../src/operators/tool-calls/execute-tool-calls.js";
import { ToolBatchSummary } from "../../../src/operators/tool-calls/tool-batch.js";
import { fromAbortSignal } from "../../../src/streams/from-abort-signal.js";
import { MessageQueue } from "../../../src/streams/message-queue.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { errorResult, textResult } from "../../../src/tools/tool-results.js";
import type { AgentEvent, AgentLoopConfig, AgentTool, AgentToolResult, ToolCall, ApprovalDecision, ToolResultMessage } from "../../../src/types.js";
import { marbles } from "../../helpers/marbles.js";
import { announce, assistantMessage, lettered, toolCall, toolResultMessage } from "../../testing/fixtures.js";

type BatchOutput = AgentEvent | ToolBatchSummary;

const results: Record<string, AgentToolResult> = { a: textResult("A"), b: textResult("B"), c: textResult("C") };

/**
 * Call a of tool "risky" (needs approval), calls b and c of tool "work"; bodies:
 *   a: 30ms (a|)    b: 10ms (b|)    c: 40ms (c|)
 * and a hot source of decisions given as a marble (none: the config has no `approvals`).
 */
function setup(
  m: Context,
  decisions: string | undefined,
  decisionValues: Record<string, ApprovalDecision> = {},
  options: { config?: Partial<AgentLoopConfig>; needsApproval?: AgentTool["needsApproval"] } = {},
) {
  const colds: Record<string, Observable<AgentToolResult>> = {
    a: m.cold<AgentToolResult>("30ms (a|)", results),
    b: m.cold<AgentToolResult>("10ms (b|)", results),
    c: m.cold<AgentToolResult>("40ms (c|)", results),
  };
  const signals: Record<string, AbortSignal> = {};
  const body = (id: string, signal: AbortSignal) => {
    signals[id] = signal;
    return colds[id]!;
  };
  const tools: AgentTool[] = [
    defineTool({
      name: "risky",
      description: "Needs a person's approval",
      parameters: Type.Object({}),
      needsApproval: options.needsApproval ?? true,
      execute: (id, _args, { signal }) => body(id, signal),
    }),
    defineTool({ name: "work", description: "Works", parameters: Type.Object({}), execute: (id, _args, { signal }) => body(id, signal) }),
  ];
  const calls: ToolCall[] = [toolCall("a", "risky"), toolCall("b", "work"), toolCall("c", "work")];
  const approvals = decisions === undefined ? undefined : m.hot(decisions, decisionValues);
  const controller = new AbortController();
  const batch$ = executeToolCalls(assistantMessage(calls), calls, {
    context: { messages: [], tools },
    config: { model: scriptedModel([]), ...(approvals ? { approvals } : {}), ...options.config },
    scheduler: m.scheduler,
    cancellation: { get aborted() { return controller.signal.aborted; }, signal: controller.signal },
    abort$: fromAbortSignal(controller.signal),
    steering: new MessageQueue(),
  });
  const callOf = (id: string) => calls.find((call) => call.id === id)!;
  const events = {
    start: (id: string): AgentEvent => ({ type: "tool_execution_start", toolCallId: id, toolName: callOf(id).name, args: {} }),
    waiting: (id: string, since: number): AgentEvent => ({ type: "tool_approval_start", toolCallId: id, toolName: callOf(id).name, args: {}, since }),
    approved: (id: string): AgentEvent => ({ type: "tool_approval_end", toolCallId: id, toolName: callOf(id).name, approved: true }),
    refused: (id: string, reason: string): AgentEvent => ({ type: "tool_approval_end", toolCallId: id, toolName: callOf(id).name, approved: false, reason }),
    end: (id: string, result: AgentToolResult = results[id]!, isError = false): AgentEvent => ({
      type: "tool_execution_end",
      toolCallId: id,
      toolName: callOf(id).name,
      result,
      isError,
    }),
    result: (id: string, timestamp: number, error?: string): ToolResultMessage =>
      error === undefined
        ? toolResultMessage(callOf(id), id.toUpperCase(), { timestamp })
        : toolResultMessage(callOf(id), error, { timestamp, isError: true }),
  };
  return { colds, signals, controller, approvals, batch$, events };
}

describe("approvals (needsApproval, config.approvals)", () => {
  it(
    "a call waits for approval while the others run; approved at 20, it runs then, and results keep call order",
    marbles((m) => {
      const { colds, approvals, batch$, events: e } = setup(m, "20ms y", { y: { toolCallId: "a", approved: true } });
      const [ra, rb, rc] = [e.result("a", 50), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.waiting("a", 0), e.start("b"), e.start("c"),
        e.end("b"),
        e.approved("a"),
        e.end("c"),
        e.end("a"), ...announce(ra), ...announce(rb), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abcd) 4ms e 9ms f 19ms g 9ms (hijklmno|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions("20ms ^ 29ms !");
      m.expect(colds.b!).toHaveSubscriptions("^ 9ms !");
      m.expect(approvals!).toHaveSubscriptions("^ 49ms !");
    }),
  );

  it(
    "a denial is the call's error result with the reason; the tool never runs",
    marbles((m) => {
      const { colds, batch$, events: e } = setup(m, "20ms n", { n: { toolCallId: "a", approved: false, reason: "not on prod" } });
      const denied = "Tool call was denied: not on prod";
      const [ra, rb, rc] = [e.result("a", 20, denied), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.waiting("a", 0), e.start("b"), e.start("c"),
        e.end("b"),
        e.refused("a", denied), e.end("a", errorResult(denied), true), ...announce(ra), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abcd) 4ms e 9ms (fghijk) 12ms (lmno|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions([]);
    }),
  );

  it(
    "approvalTimeoutMs denies a call nobody answered",
    marbles((m) => {
      const { colds, batch$, events: e } = setup(m, "-", {}, { config: { approvalTimeoutMs: 25 } });
      const denied = "Tool call was denied: no answer within 25 ms";
      const [ra, rb, rc] = [e.result("a", 25, denied), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.waiting("a", 0), e.start("b"), e.start("c"),
        e.end("b"),
        e.refused("a", denied), e.end("a", errorResult(denied), true), ...announce(ra), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abcd) 4ms e 14ms (fghijk) 7ms (lmno|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions([]);
    }),
  );

  it(
    "an abort while a call waits settles the wait as aborted, with the running calls",
    marbles((m) => {
      const { colds, controller, batch$, events: e } = setup(m, "-");
      m.scheduler.schedule(() => controller.abort(), 15);
      const aborted = "Tool execution was aborted.";
      const [ra, rb, rc] = [e.result("a", 15, aborted), e.result("b", 10), e.result("c", 15, aborted)];
      const expected: BatchOutput[] = [
        e.start("a"), e.waiting("a", 0), e.start("b"), e.start("c"),
        e.end("b"),
        e.refused("a", aborted), e.end("a", errorResult(aborted), true), ...announce(ra), ...announce(rb),
        e.end("c", errorResult(aborted), true), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abcd) 4ms e 4ms (fghijklmno|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions([]);
      m.expect(colds.c!).toHaveSubscriptions("^ 14ms !");
    }),
  );

  it(
    "a needsApproval that answers later: an answer that came before the wait is kept for it",
    marbles((m) => {
      const asked = m.cold<boolean>("10ms (t|)", { t: true });
      const { batch$, events: e } = setup(m, "5ms y", { y: { toolCallId: "a", approved: true } }, { needsApproval: () => asked });
      const [ra, rb, rc] = [e.result("a", 40), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.start("b"), e.start("c"),
        e.waiting("a", 10), e.approved("a"), e.end("b"),
        e.end("c"),
        e.end("a"), ...announce(ra), ...announce(rb), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abc) 5ms (def) 25ms (ghijklmno|)", lettered(expected));
    }),
  );

  it(
    "a needsApproval that answers false lets the call run at once, with no approval events",
    marbles((m) => {
      const { batch$, events: e } = setup(m, "-", {}, { needsApproval: () => false });
      const [ra, rb, rc] = [e.result("a", 30), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.start("b"), e.start("c"),
        e.end("b"),
        e.end("a"), ...announce(ra), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abc) 5ms d 19ms (efghi) 3ms (jklm|)", lettered(expected));
    }),
  );

  it(
    "without an approvals source, a call that needs approval is denied at once, saying why",
    marbles((m) => {
      const { batch$, events: e } = setup(m, undefined);
      const denied = "Tool call was denied: it needs approval, and nothing can answer (the loop has no `approvals` source)";
      const [ra, rb, rc] = [e.result("a", 0, denied), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.waiting("a", 0), e.refused("a", denied), e.end("a", errorResult(denied), true), ...announce(ra), e.start("b"), e.start("c"),
        e.end("b"), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abcdefgh) 0ms (ijk) 25ms (lmno|)", lettered(expected));
    }),
  );

  it(
    "a needsApproval that throws denies the call with an error result saying so",
    marbles((m) => {
      const { colds, batch$, events: e } = setup(m, "-", {}, {
        needsApproval: () => {
          throw new Error("policy service down");
        },
      });
      const denied = 'needsApproval failed for tool "risky": policy service down';
      const [ra, rb, rc] = [e.result("a", 0, denied), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.end("a", errorResult(denied), true), ...announce(ra), e.start("b"), e.start("c"),
        e.end("b"), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abcdef) 2ms (ghi) 25ms (jklm|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions([]);
    }),
  );

  it(
    "in a sequential batch, the next call waits for the approved call to finish",
    marbles((m) => {
      const { batch$, events: e } = setup(m, "20ms y", { y: { toolCallId: "a", approved: true } }, { config: { toolExecution: "sequential" } });
      const [ra, rb, rc] = [e.result("a", 50), e.result("b", 60), e.result("c", 100)];
      const expected: BatchOutput[] = [
        e.start("a"), e.waiting("a", 0),
        e.approved("a"),
        e.end("a"), ...announce(ra), e.start("b"),
        e.end("b"), ...announce(rb), e.start("c"),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(ab) 16ms c 29ms (defg) 4ms (hijk) 34ms (lmno|)", lettered(expected));
    }),
  );
});
