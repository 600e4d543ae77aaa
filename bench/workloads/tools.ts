import type { BenchToolResult, ToolBody } from "../implementations/implementation.js";

const instantResult: BenchToolResult = { content: [{ type: "text", text: "ok" }], details: undefined };

/** A tool that answers at once with a plain value (rxagent and the floor take it as is). */
export const instantTool: ToolBody = () => ({ content: instantResult.content, details: undefined });

/**
 * `instantTool` that first reads its call's `signal.aborted`, as a tool that checks for
 * cancellation does (in rxagent the signal is made on first read).
 */
export const signalReadingTool: ToolBody = (_args, context) => {
  if (context.signal.aborted) throw new Error("aborted");
  return { content: instantResult.content, details: undefined };
};

/** A tool that answers with an already resolved Promise (what an `async` tool body does). */
export const resolvedTool: ToolBody = () => Promise.resolve({ content: instantResult.content, details: undefined });

/** Counts tool bodies running at once. */
export interface RunningProbe {
  running: number;
  maxRunning: number;
}

/** A tool that sleeps `ms` on a real `setTimeout`, tracking how many run at once. */
export function sleepingTool(ms: number, probe: RunningProbe): ToolBody {
  return () => {
    probe.running += 1;
    probe.maxRunning = Math.max(probe.maxRunning, probe.running);
    return new Promise<BenchToolResult>((resolve) =>
      setTimeout(() => {
        probe.running -= 1;
        resolve({ content: instantResult.content, details: undefined });
      }, ms),
    );
  };
}
