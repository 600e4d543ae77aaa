import type { SchedulerLike } from "rxjs";
import { errorText } from "../errors.js";
import type { AgentEvent, TranscriptStore } from "../types.js";
import { warnerOf } from "../util/detached-callback.js";
import { approvalRecordOf, type RecordedBatch } from "./approval-records.js";

/**
 * Writes what an event means for an `Agent`'s store: each message that ends is appended, and
 * with a store that keeps records, the approval records (`approvalRecordOf`). A store that throws
 * loses nothing but that write: `onWarning` is told (`warn`), and the agent goes on.
 */
export function writeToStore(store: TranscriptStore, event: AgentEvent, batch: RecordedBatch, clock: SchedulerLike, onWarning: Warn | undefined): void {
  if (event.type === "message_end") {
    try {
      store.append(event.message);
    } catch (error) {
      warn(onWarning, `The transcript store failed to append a message: ${errorText(error)}`);
    }
  }
  if (!store.record) return;
  const record = approvalRecordOf(event, batch, clock.now());
  if (!record) return;
  try {
    store.record(record);
  } catch (error) {
    warn(onWarning, `The transcript store failed to keep a ${record.type} record: ${errorText(error)}`);
  }
}

type Warn = (message: string) => void;

/** Tells `onWarning` (`AgentOptions.onWarning`) about a problem that must not stop the agent; `console.warn` without one (`warnerOf`). */
export function warn(onWarning: Warn | undefined, message: string): void {
  warnerOf(onWarning)(message);
}
