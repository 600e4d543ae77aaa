import { concatMap, EMPTY, map, Observable, of, race, take, timer } from "rxjs";
import { errorText } from "../../errors.js";
import { errorResult } from "../../tools/tool-results.js";
import type { AgentEvent, ApprovalDecision } from "../../types.js";
import { answerOfHook } from "./answer-of-hook.js";
import { FinalizedToolCall, PreparedToolCall, type ToolBatch } from "./tool-batch.js";

/** The error text of a denied call. */
export function deniedToolText(reason: string | undefined): string {
  return reason === undefined || reason === "" ? "Tool call was denied." : `Tool call was denied: ${reason}`;
}

/**
 * One batch's answers to calls waiting for approval, by call id: made only when a tool of the
 * batch has `needsApproval`, fed by the batch's one subscription to `config.approvals`. An answer
 * for a call of the batch that does not wait yet is kept until it does.
 */
export class CallApprovals {
  private readonly early = new Map<string, ApprovalDecision>();
  private readonly waiting = new Map<string, (decision: ApprovalDecision) => void>();

  constructor(
    /** Whether anything can answer: without a source, a call that needs approval is denied at once. */
    readonly answerable: boolean,
    private readonly isCallOfBatch: (toolCallId: string) => boolean,
  ) {}

  decide(decision: ApprovalDecision): void {
    // A malformed answer (from a caller's own source) is not one.
    if (typeof decision !== "object" || decision === null || typeof decision.toolCallId !== "string" || typeof decision.approved !== "boolean") return;
    const listener = this.waiting.get(decision.toolCallId);
    if (listener) {
      this.waiting.delete(decision.toolCallId);
      listener(decision);
    } else if (this.isCallOfBatch(decision.toolCallId) && !this.early.has(decision.toolCallId)) {
      this.early.set(decision.toolCallId, decision);
    }
  }

  /** Emits the call's answer once it comes (at once if it came early), then completes. */
  decision$(toolCallId: string): Observable<ApprovalDecision> {
    return new Observable<ApprovalDecision>((subscriber) => {
      const early = this.early.get(toolCallId);
      if (early) {
        this.early.delete(toolCallId);
        subscriber.next(early);
        subscriber.complete();
        return undefined;
      }
      const listener = (decision: ApprovalDecision) => {
        subscriber.next(decision);
        subscriber.complete();
      };
      this.waiting.set(toolCallId, listener);
      return () => {
        if (this.waiting.get(toolCallId) === listener) this.waiting.delete(toolCallId);
      };
    });
  }
}

/** How a wait for approval ends: the call runs, or it is settled with an error result. */
type Outcome = { approved: true } | { approved: false; reason: string; interrupted: boolean };
const APPROVED: Outcome = { approved: true };
const denied = (reason: string, interrupted = false): Outcome => ({ approved: false, reason, interrupted });

/**
 * Lets a prepared call through once it is approved, for a tool with `needsApproval`.
 *
 * Emits the call itself (then completes) when no approval is needed, or once it is approved; a
 * call that waits is announced to `passOn` with `tool_approval_start`, and its wait ends with
 * `tool_approval_end`. Denied (an answer, `approvalTimeoutMs`, a `needsApproval` that fails), aborted,
 * steered or cancelled meanwhile: `passOn` gets its `FinalizedToolCall` with the error result,
 * and nothing is emitted. Waiting holds no concurrency slot: the gate comes before the fan-out.
 */
export function awaitApproval(
  prepared: PreparedToolCall,
  batch: ToolBatch,
  approvals: CallApprovals,
  passOn: (output: AgentEvent | FinalizedToolCall) => void,
): Observable<PreparedToolCall> {
  const { tool, toolCall, args } = prepared;
  const needsApproval = tool.needsApproval;
  if (!needsApproval) return of(prepared);
  if (needsApproval === true) return waitForDecision(prepared, batch, approvals, passOn);
  const asked = answerOfHook<boolean, Outcome | "ask">(
    () => needsApproval(args, { toolCallId: toolCall.id, signal: batch.cancellation.signal }),
    {
      answered: (answer) => (answer === true ? "ask" : APPROVED),
      failed: (error) => denied(`needsApproval failed for tool "${toolCall.name}": ${errorText(error)}`),
      interrupted: (reason) => denied(reason, true),
    },
    batch.interruption,
    batch.cancellations?.message$(toolCall.id),
  );
  const next = (outcome: Outcome | "ask"): Observable<PreparedToolCall> => {
    if (outcome === "ask") return waitForDecision(prepared, batch, approvals, passOn);
    if (outcome.approved) return of(prepared);
    passOn(new FinalizedToolCall(prepared.index, toolCall, errorResult(outcome.reason), true, outcome.interrupted));
    return EMPTY;
  };
  return asked instanceof Observable ? asked.pipe(take(1), concatMap(next)) : next(asked);
}

function waitForDecision(
  prepared: PreparedToolCall,
  batch: ToolBatch,
  approvals: CallApprovals,
  passOn: (output: AgentEvent | FinalizedToolCall) => void,
): Observable<PreparedToolCall> {
  const { toolCall } = prepared;
  return new Observable<PreparedToolCall>((subscriber) => {
    const settle = (outcome: Outcome) => {
      if (outcome.approved) {
        passOn({ type: "tool_approval_end", toolCallId: toolCall.id, toolName: toolCall.name, approved: true });
        subscriber.next(prepared);
      } else {
        passOn({ type: "tool_approval_end", toolCallId: toolCall.id, toolName: toolCall.name, approved: false, reason: outcome.reason });
        passOn(new FinalizedToolCall(prepared.index, toolCall, errorResult(outcome.reason), true, outcome.interrupted));
      }
      subscriber.complete();
    };
    passOn({ type: "tool_approval_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments, since: batch.scheduler.now() });
    if (subscriber.closed) return undefined;
    if (!approvals.answerable) {
      settle(denied(deniedToolText("it needs approval, and nothing can answer (the loop has no `approvals` source)")));
      return undefined;
    }
    const timeoutMs = batch.config.approvalTimeoutMs;
    const ends: Observable<Outcome>[] = [
      approvals.decision$(toolCall.id).pipe(map((decision) => (decision.approved ? APPROVED : denied(deniedToolText(decision.reason))))),
      batch.interruption.reason$.pipe(map((reason) => denied(reason, true))),
    ];
    if (batch.cancellations) ends.push(batch.cancellations.message$(toolCall.id).pipe(map((message) => denied(message, true))));
    if (timeoutMs !== undefined && timeoutMs > 0) {
      ends.push(timer(timeoutMs, batch.scheduler).pipe(map(() => denied(deniedToolText(`no answer within ${timeoutMs} ms`)))));
    }
    return race(ends).pipe(take(1)).subscribe({ next: settle });
  });
}
