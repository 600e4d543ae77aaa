import type { AgentTool } from "../../types.js";

/**
 * One AbortController whose signal the calls of a batch share when they can only be stopped
 * together: calls of the same tool with the same deadline, in a batch without a `cancellations`
 * source, that read their signal while they start (see `ToolExecution.signal`). Such calls are
 * stopped by the batch's interruption (abort, steering), by the batch's teardown, or by their
 * one deadline, and each of those stops every one of them still running at once; no cause stops
 * one of them alone, so one signal fires for all of them. A call that has finished keeps the
 * signal, which may still fire when the others are stopped, as the reference's signal (one per
 * run) does.
 *
 * Why share: on Node 20 the first read of an AbortController's `signal` costs about 3.5 µs (Node
 * builds the AbortSignal with `new EventTarget()` and `Object.setPrototypeOf`; about 42 ns on
 * Node 24), which a tool reading its signal paid on every call: bench W2 "tools that read
 * signal.aborted", +3.4 µs per call in the 3-run median of 2026-12-01.
 */
export class CallSignalGroup {
  readonly controller = new AbortController();

  constructor(
    private readonly tool: AgentTool,
    private readonly deadline: number,
  ) {}

  /** True when a call of `tool` ending at `deadline` may share the signal: it has not fired yet. */
  admits(tool: AgentTool, deadline: number): boolean {
    return this.tool === tool && this.deadline === deadline && !this.controller.signal.aborted;
  }
}
