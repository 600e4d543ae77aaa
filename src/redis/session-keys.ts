/**
 * The Redis keys of one session. The session id sits in a hash tag (`{…}`), so every key of a
 * session lands in the same slot of a Redis Cluster and one Lua script may touch them all.
 */
export interface SessionKeys {
  /** A list: one JSON message per element, in transcript order. */
  transcript: string;
  /** A stream: one entry per event frame, its id `<seq>-0`. */
  events: string;
  /**
   * A hash: `epoch` and `seq` (the frame after which the epoch's numbering starts), `lastSeq` (the
   * last frame stored), `takeovers` (of the live run, without a transcript append since), and
   * while a run lives `runSeq` / `runLength` (where its state starts).
   */
  meta: string;
  /** A string: the token of the process that runs the session, with an expiry. */
  lease: string;
  /**
   * A list: the steering and follow-up messages the runner took and its run has not yet turned
   * into transcript messages, in the order they came (`SessionQueue`).
   */
  queue: string;
  /** Pub/sub: every frame the runner appends, for the processes watching live. */
  frames: string;
  /** Pub/sub: commands for the runner, from any process. */
  commands: string;
}

export function sessionKeys(prefix: string, sessionId: string): SessionKeys {
  const base = `${prefix}{${sessionId}}:`;
  return {
    transcript: `${base}transcript`,
    events: `${base}events`,
    meta: `${base}meta`,
    lease: `${base}lease`,
    queue: `${base}queue`,
    frames: `${base}frames`,
    commands: `${base}commands`,
  };
}

/** The default key prefix. */
export const DEFAULT_KEY_PREFIX = "rxagent:";
