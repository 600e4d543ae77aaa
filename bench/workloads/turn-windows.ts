import type { EventSink, Implementation } from "../implementations/implementation.js";
import type { TimedRun } from "./harness.js";

/** A timed run with its time over the first and the last `window` turns of `turns`. */
export interface TurnWindows extends TimedRun {
  first: number;
  last: number;
}

/**
 * Times the turns of `run` (which passes every event to its `onEvent`): the run, and the sum of
 * the first and of the last `window` of `turns` turns (a turn from its `turn_start` to the next).
 */
export async function timeTurns(
  implementation: Implementation,
  window: number,
  turns: number,
  run: (onEvent: EventSink) => Promise<TimedRun>,
): Promise<TurnWindows> {
  const turnStarts: number[] = [];
  const timedRun = await run((event) => {
    if (event.type === "turn_start") turnStarts.push(performance.now());
  });
  if (turnStarts.length < turns) throw new Error(`${implementation.name}: ${turnStarts.length} turns, expected at least ${turns}`);
  const end = turnStarts[0]! + timedRun.ms;
  const durations = turnStarts.map((start, index) => (turnStarts[index + 1] ?? end) - start);
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  // The last (closing) turn has no tool call: compare the first and last `window` tool turns.
  return { ...timedRun, first: sum(durations.slice(0, window)), last: sum(durations.slice(turns - window, turns)) };
}
