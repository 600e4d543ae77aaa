import { concat, concatMap, defer, map, Observable, of, race, take, timer } from "rxjs";
import { errorText } from "../../errors.js";
import { errorResult } from "../../tools/tool-results.js";
import type { ApprovalDecision } from "../../types.js";
import { answerOfHook } from "./answer-of-hook.js";
import type { PreparationOutput } from "./prepare-tool-call.js";
import { FinalizedToolCall, type PreparedToolCall, type ToolBatch } from "./tool-batch.js";

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
 * call that waits emits `tool_approval_start` first, and `tool_approval_end` when its wait ends.
 * Denied (an answer, `approvalTimeoutMs`, a `needsApproval` that fails), aborted, steered or
 * cancelled meanwhile: it emits the call's `FinalizedToolCall` with the error result instead.
 * Waiting holds no concurrency slot: the gate comes before the fan-out.
 */
export function awaitApproval(prepared: PreparedToolCall, batch: ToolBatch, approvals: CallApprovals): Observable<PreparationOutput> {
  const { tool, toolCall, args } = prepared;
  const needsApproval = tool.needsApproval;
  if (!needsApproval) return of(prepared);
  if (needsApproval === true) return waitForDecision(prepared, batch, approvals);
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
  const next = (outcome: Outcome | "ask"): Observable<PreparationOutput> => {
    if (outcome === "ask") return waitForDecision(prepared, batch, approvals);
    return of(outcome.approved ? prepared : refused(prepared, outcome));
  };
  return asked instanceof Observable ? asked.pipe(take(1), concatMap(next)) : next(asked);
}

function waitForDecision(prepared: PreparedToolCall, batch: ToolBatch, approvals: CallApprovals): Observable<PreparationOutput> {
  const { toolCall } = prepared;
  // `since`: when the wait starts, that is, when this is subscribed to.
  const start$ = defer((): PreparationOutput[] => [{ type: "tool_approval_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments, since: batch.scheduler.now() }]);
  const decided$ = defer((): Observable<Outcome> => {
    if (!approvals.answerable) return of(denied(deniedToolText("it needs approval, and nothing can answer (the loop has no `approvals` source)")));
    const timeoutMs = batch.config.approvalTimeoutMs;
    const ends: Observable<Outcome>[] = [
      approvals.decision$(toolCall.id).pipe(map((decision) => (decision.approved ? APPROVED : denied(deniedToolText(decision.reason))))),
      batch.interruption.reason$.pipe(map((reason) => denied(reason, true))),
    ];
    if (batch.cancellations) ends.push(batch.cancellations.message$(toolCall.id).pipe(map((message) => denied(message, true))));
    if (timeoutMs !== undefined && timeoutMs > 0) {
      ends.push(timer(timeoutMs, batch.scheduler).pipe(map(() => denied(deniedToolText(`no answer within ${timeoutMs} ms`)))));
    }
    return race(ends).pipe(take(1));
  });
  const ended$ = decided$.pipe(
    concatMap((outcome): PreparationOutput[] =>
      outcome.approved
        ? [{ type: "tool_approval_end", toolCallId: toolCall.id, toolName: toolCall.name, approved: true }, prepared]
        : [{ type: "tool_approval_end", toolCallId: toolCall.id, toolName: toolCall.name, approved: false, reason: outcome.reason }, refused(prepared, outcome)],
    ),
  );
  return concat(start$, ended$);
}

/** A call its approval turned down: finalized with the reason as its error result. */
function refused(prepared: PreparedToolCall, outcome: Extract<Outcome, { approved: false }>): FinalizedToolCall {
  return new FinalizedToolCall(prepared.index, prepared.toolCall, errorResult(outcome.reason), true, outcome.interrupted);
}
