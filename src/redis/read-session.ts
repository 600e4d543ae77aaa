import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { AgentEvent } from "../types.js";
import { storedTranscriptOf } from "./redis-transcript-store.js";
import type { SessionKeys } from "./session-keys.js";
import { SessionMirror } from "./session-mirror.js";

/**
 * Reads a session in one transaction (its epoch, made on first use; its transcript; its stream;
 * where a live run started) and builds this process's mirror of it: the frames kept for resume,
 * the state rebuilt from the transcript as it was when the live run started plus that run's frames.
 * The meta's `epoch` and `seq` say where the epoch's numbering starts, `lastSeq` the last frame stored.
 */
export async function readSession(redis: Redis, keys: SessionKeys, sessionId: string, maxEvents: number, warn: (message: string) => void): Promise<SessionMirror> {
  const results = await redis.multi().hsetnx(keys.meta, "epoch", randomUUID()).hgetall(keys.meta).lrange(keys.transcript, 0, -1).xrange(keys.events, "-", "+").exec();
  if (!results) throw new Error(`session ${sessionId}: the transaction that reads it was aborted.`);
  const failed = results.find(([error]) => error);
  if (failed) throw failed[0] as Error;
  const meta = results[1]?.[1] as Record<string, string>;
  const transcript = storedTranscriptOf(results[2]?.[1] as string[], keys.transcript, warn).messages;
  const entries = (results[3]?.[1] as [string, string[]][]).map(([id, fields]) => ({ seq: Number.parseInt(id, 10), type: fields[1] as AgentEvent["type"], json: fields[3] as string }));
  const runSeq = meta["runSeq"] === undefined ? undefined : Number(meta["runSeq"]);
  const runLength = meta["runLength"] === undefined ? transcript.length : Number(meta["runLength"]);
  const mirror = new SessionMirror(sessionId, meta["epoch"] as string, Number(meta["seq"] ?? 0), runSeq === undefined ? transcript : transcript.slice(0, runLength), maxEvents);
  mirror.keep(runSeq === undefined ? entries : entries.filter((entry) => entry.seq <= runSeq));
  if (runSeq !== undefined) mirror.replayRun(entries.filter((entry) => entry.seq > runSeq));
  // The stream expired (or was trimmed past its end) while the meta stayed: numbering goes on
  // after the last frame ever stored, and a client from before it gets a snapshot.
  const lastSeq = Number(meta["lastSeq"] ?? 0);
  if (lastSeq > mirror.lastSeq) mirror.skipTo(lastSeq);
  queuedFromMeta(mirror, meta);
  return mirror;
}

/** Gives `mirror` the queue counts a session's meta holds (`queueVersion`, `queuedSteering`, `queuedFollowUp`). */
export function queuedFromMeta(mirror: SessionMirror, meta: Record<string, string | null | undefined>): void {
  const version = Number(meta["queueVersion"] ?? 0);
  if (version > 0) mirror.queued(version, Number(meta["queuedSteering"] ?? 0), Number(meta["queuedFollowUp"] ?? 0));
}
