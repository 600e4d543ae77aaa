import { asyncScheduler, Observable, type SchedulerLike } from "rxjs";
import { type AssistantMessage, emptyUsage } from "../types/messages.js";
import type { Model, ModelEvent } from "../types/model.js";
import { type Cassette, type CassetteCall, checkedCassette } from "./cassette.js";
import { cassetteRequestOf, requestDifferences } from "./cassette-request.js";
import { applyMessageChanges } from "./message-changes.js";
import { messageKeyOf, messageOf } from "./recording-model.js";

export interface CassetteModelOptions {
  /**
   * Plays each event at its recorded time after the call starts. Default `asyncScheduler`;
   * in a marble test the `TestScheduler`, so events land at exact virtual times.
   *
   * Contract: the scheduler the run uses, so the replayed times line up with the loop's own.
   */
  scheduler?: SchedulerLike;
  /**
   * Divides the recorded delays: 2 plays twice as fast, `Infinity` plays each call's events
   * at once (still asynchronously, as a real model would). Default 1.
   *
   * Contract: a number above 0.
   */
  speed?: number;
}

/** A model that replays a cassette; `calls` counts the calls made so far. */
export interface CassetteModel extends Model {
  readonly calls: number;
}

/**
 * A `Model` that replays a cassette: call n gets the events of recorded call n at their
 * recorded times (rounded to whole milliseconds after the speed is applied).
 *
 * - A request that differs from the recorded one (another transcript, a missing tool) ends the
 *   call as an error message (`stopReason: "error"`) listing the differences, so a test fails
 *   with a readable diff instead of replaying the wrong answer. So does a call past the end.
 * - A recording cut short (a crash) replays what it has, then ends as an error message.
 * - The abort signal ends the call with an aborted message at once (on the scheduler);
 *   unsubscribing cancels the pending events.
 *
 * @example
 * const model = cassetteModel(parseCassette(text), { scheduler: m.scheduler });
 */
export function cassetteModel(cassette: Cassette, options: CassetteModelOptions = {}): CassetteModel {
  const scheduler = options.scheduler ?? asyncScheduler;
  const speed = options.speed ?? 1;
  if (!(speed > 0)) throw new RangeError(`cassetteModel: speed must be above 0, not ${speed}.`);
  checkedCassette(cassette);
  const identity = { id: cassette.model.id, provider: cassette.model.provider, api: cassette.model.api };
  let calls = 0;
  return {
    ...identity,
    get calls() {
      return calls;
    },
    stream(context, { signal }) {
      return new Observable<ModelEvent>((subscriber) => {
        const callNumber = ++calls;
        const recorded: CassetteCall | undefined = cassette.calls[callNumber - 1];
        const failure = recorded === undefined
          ? `cassetteModel: the cassette has ${cassette.calls.length} calls; there is no call #${callNumber} to replay.`
          : divergence(recorded, cassetteRequestOf(context), callNumber);
        const timeline: { dueAt: number; event: ModelEvent }[] = failure === undefined && recorded ? replayedEvents(recorded, speed) : [];
        const emptyMessage = (): AssistantMessage => ({
          role: "assistant",
          content: [],
          api: identity.api,
          provider: identity.provider,
          model: identity.id,
          usage: emptyUsage(),
          stopReason: "stop",
          timestamp: scheduler.now(),
        });
        let last: AssistantMessage | undefined;
        const emit = (event: ModelEvent) => {
          last = messageOf(event);
          subscriber.next(event);
        };
        const endWith = (reason: "error" | "aborted", errorMessage: string) => {
          if (last === undefined) emit({ type: "start", partial: emptyMessage() });
          const final: AssistantMessage = { ...(last ?? emptyMessage()), stopReason: reason, errorMessage };
          emit({ type: "error", reason, error: final });
          subscriber.complete();
        };
        let index = 0;
        /** Virtual milliseconds since the call started, as far as the playing action got. */
        let elapsed = 0;
        const playDue = (): number | undefined => {
          // An abort fired by the consumer of the event just emitted stops the rest of the frame.
          while (!subscriber.closed && !signal.aborted) {
            const next = timeline[index];
            if (next === undefined) {
              endWith("error", failure ?? `cassetteModel: the recording of call #${callNumber} ends here (it was cut short).`);
              return undefined;
            }
            if (next.dueAt > elapsed) return next.dueAt - elapsed;
            index++;
            emit(next.event);
            if (next.event.type === "done" || next.event.type === "error") subscriber.complete();
          }
          return undefined;
        };
        elapsed = timeline[0]?.dueAt ?? 0;
        // One action that reschedules itself, as scriptedModel's: the events due in one frame go
        // out together, and unsubscribing or an abort cancels a single timer.
        const playing = scheduler.schedule(function () {
          const wait = playDue();
          if (wait !== undefined) {
            elapsed += wait;
            this.schedule(undefined, wait);
          }
        }, elapsed);
        const onAbort = () => {
          playing.unsubscribe();
          subscriber.add(scheduler.schedule(() => endWith("aborted", "Request was aborted")));
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
        return () => {
          signal.removeEventListener("abort", onAbort);
          playing.unsubscribe();
        };
      });
    },
  };
}

/** The recorded call's events as `ModelEvent`s, each with the time it is due after the call starts. */
function replayedEvents(call: CassetteCall, speed: number): { dueAt: number; event: ModelEvent }[] {
  let message: AssistantMessage | undefined;
  return call.events.map((recorded) => {
    message = applyMessageChanges(message, recorded.changes);
    const event = { ...structuredClone(recorded.event), [messageKeyOf(recorded.event.type)]: message } as ModelEvent;
    return { dueAt: speed === Infinity ? 0 : Math.round(recorded.at / speed), event };
  });
}

function divergence(recorded: CassetteCall, sent: ReturnType<typeof cassetteRequestOf>, callNumber: number): string | undefined {
  const differences = requestDifferences(recorded.request, sent);
  if (differences.length === 0) return undefined;
  return [`cassetteModel: call #${callNumber} differs from the recording:`, ...differences.map((line) => `- ${line}`)].join("\n");
}
