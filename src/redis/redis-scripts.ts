import type { Redis } from "ioredis";

/**
 * The Lua scripts of a session, each one atomic on the server. Every write a runner makes is
 * fenced by its lease token: a process that lost its lease (paused past the expiry, cut off from
 * Redis) cannot append a frame after another process took the session over.
 */
/**
 * Lua: keeps the session's queue counts in the meta (`queuedSteering`, `queuedFollowUp`, and a
 * `queueVersion` that grows with each change) and publishes them on the frames channel, for every
 * process's mirror (its snapshots show them). Why the runner's counts are passed in rather than
 * counted here: only a lease holder writes the list, its `SessionQueue` holds exactly what the
 * list holds after the script, and counting here would parse every element (images included) on
 * each change. The notice carries the epoch, so a process that reads any message without a frame
 * number as a reset (before this notice existed) ignores it.
 */
const NOTE_QUEUE = `local function noteQueue(meta, steering, followUp, channel)
  local version = redis.call("hincrby", meta, "queueVersion", 1)
  redis.call("hset", meta, "queuedSteering", steering, "queuedFollowUp", followUp)
  local epoch = redis.call("hget", meta, "epoch") or ""
  redis.call("publish", channel, cjson.encode({type = "queue", epoch = epoch, version = version, steering = tonumber(steering), followUp = tonumber(followUp)}))
end
`;

const SCRIPTS = {
  /** Extends the lease if this token still holds it. */
  rxagentRenewLease: {
    numberOfKeys: 1,
    lua: `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end return 0`,
  },
  /**
   * Ends the run (its end told the clients what went wrong): forgets where its state starts, its
   * takeovers, a `broken` mark, drops the queued messages (ARGV[5..]) the run dropped (the queue
   * counts left: ARGV[2], ARGV[3]; the frames channel ARGV[4]), and frees the lease, if this token
   * holds it.
   */
  rxagentReleaseLease: {
    numberOfKeys: 3,
    lua: `${NOTE_QUEUE}if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("hdel", KEYS[2], "runSeq", "runLength", "takeovers", "broken")
local removed = 0
for index = 5, #ARGV do removed = removed + redis.call("lrem", KEYS[3], 1, ARGV[index]) end
if removed > 0 then noteQueue(KEYS[2], ARGV[2], ARGV[3], ARGV[4]) end
return redis.call("del", KEYS[1])`,
  },
  /**
   * Appends one transcript element (a message or a record) if this token still holds the lease.
   * With an index (ARGV[3], else ""), exactly once and without a gap: an element already there
   * (ioredis sent it again after a reconnect) is not pushed twice, and one whose predecessor
   * never arrived marks the session `broken` and is refused (-1). An append is progress: the
   * count of takeovers without progress starts again. A message the run took from the session's
   * queue leaves it here (its queue element ARGV[4], else ""), in the same step as its append, so
   * no crash loses it or delivers it twice; also on a resend, which removes a copy the resend of
   * its enqueue may have put back. ARGV[5..7]: the queue counts after it and the frames channel.
   */
  rxagentFencedPush: {
    numberOfKeys: 4,
    lua: `${NOTE_QUEUE}if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
local stored = nil
if ARGV[3] ~= "" then
  local length = redis.call("llen", KEYS[2])
  local index = tonumber(ARGV[3])
  if length < index then
    redis.call("hset", KEYS[3], "broken", "1")
    return -1
  end
  if length > index then stored = length end
end
if ARGV[4] ~= "" and redis.call("lrem", KEYS[4], 1, ARGV[4]) > 0 then noteQueue(KEYS[3], ARGV[5], ARGV[6], ARGV[7]) end
if stored then return stored end
redis.call("hdel", KEYS[3], "takeovers")
return redis.call("rpush", KEYS[2], ARGV[2])`,
  },
  /**
   * Queues a steering or follow-up message (its element ARGV[2], unique) on the session's queue if
   * this token still holds the lease. Removed first, so a resend after a reconnect keeps one copy.
   * ARGV[3..5]: the queue counts after it and the frames channel.
   */
  rxagentQueueMessage: {
    numberOfKeys: 3,
    lua: `${NOTE_QUEUE}if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("lrem", KEYS[2], 1, ARGV[2])
local length = redis.call("rpush", KEYS[2], ARGV[2])
noteQueue(KEYS[3], ARGV[3], ARGV[4], ARGV[5])
return length`,
  },
  /**
   * Removes elements (ARGV[5..]) a new runner found it cannot queue (not a queued message, or one
   * its agent refused) and sets the queue counts (ARGV[2], ARGV[3]; the frames channel ARGV[4]),
   * if this token holds the lease. Returns 1, or 0 without the lease.
   */
  rxagentUnqueue: {
    numberOfKeys: 3,
    lua: `${NOTE_QUEUE}if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
for index = 5, #ARGV do redis.call("lrem", KEYS[2], 1, ARGV[index]) end
noteQueue(KEYS[3], ARGV[2], ARGV[3], ARGV[4])
return 1`,
  },
  /**
   * Makes the elements (ARGV[2..]) the whole transcript, in one step, if this token (ARGV[1])
   * holds the lease; with no token (""), unfenced. Pushed one at a time: `unpack` of a long
   * transcript would pass Lua's limit on arguments.
   */
  rxagentReplaceTranscript: {
    numberOfKeys: 2,
    lua: `if ARGV[1] ~= "" and redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("del", KEYS[2])
for index = 2, #ARGV do redis.call("rpush", KEYS[2], ARGV[index]) end
return 1`,
  },
  /** Marks that the transcript misses messages the run made, if this token holds the lease: no takeover continues from it. */
  rxagentMarkBroken: {
    numberOfKeys: 2,
    lua: `if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end return redis.call("hset", KEYS[2], "broken", "1")`,
  },
  /**
   * A takeover of a live run by this token: counts it, and returns how many came without
   * progress, or -1 when the transcript is marked `broken` (it misses messages of the run).
   */
  rxagentCountTakeover: {
    numberOfKeys: 2,
    lua: `if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call("hexists", KEYS[2], "broken") == 1 then return -1 end
return redis.call("hincrby", KEYS[2], "takeovers", 1)`,
  },
  /**
   * Appends one frame to the stream (id `<seq>-0`, trimmed, with an expiry) and publishes it. Its
   * `seq` is kept in the meta too (`lastSeq`), which does not expire: a stream that expired does
   * not make the next runner number from 1 again within the same epoch. A frame numbered at or
   * below `lastSeq` is already stored: ioredis resends a command whose reply a reconnect lost, and
   * that resend is answered as done (numbering only grows, so it can be nothing else).
   */
  rxagentAppendFrame: {
    numberOfKeys: 3,
    lua: `if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(redis.call("hget", KEYS[3], "lastSeq") or "0") >= tonumber(ARGV[2]) then return 1 end
redis.call("xadd", KEYS[2], "MAXLEN", "~", ARGV[5], ARGV[2] .. "-0", "t", ARGV[3], "f", ARGV[4])
redis.call("hset", KEYS[3], "lastSeq", ARGV[2])
redis.call("pexpire", KEYS[2], ARGV[6])
redis.call("publish", ARGV[7], ARGV[4])
return 1`,
  },
  /** Marks where the live run's state starts: after frame `runSeq`, on the first `runLength` messages. */
  rxagentStartRun: {
    numberOfKeys: 2,
    lua: `if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("hset", KEYS[2], "runSeq", ARGV[2], "runLength", ARGV[3])
return 1`,
  },
  /** Forgets the transcript, the frames and the queued messages, starts a new epoch after `seq`, and tells the watchers. */
  rxagentResetSession: {
    numberOfKeys: 5,
    lua: `if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("del", KEYS[2], KEYS[3], KEYS[5])
redis.call("hset", KEYS[4], "epoch", ARGV[3], "seq", ARGV[2])
redis.call("hdel", KEYS[4], "runSeq", "runLength", "queuedSteering", "queuedFollowUp")
redis.call("publish", ARGV[5], ARGV[4])
return 1`,
  },
} as const;

/** A connection with the session scripts defined (ioredis sends each by its SHA after the first call). */
export interface ScriptedRedis extends Redis {
  rxagentRenewLease(lease: string, token: string, ttlMs: number): Promise<number>;
  rxagentReleaseLease(lease: string, meta: string, queue: string, token: string, steering: number, followUp: number, channel: string, ...dropped: string[]): Promise<number>;
  rxagentFencedPush(lease: string, transcript: string, meta: string, queue: string, token: string, json: string, index: number | "", queued: string, steering: number, followUp: number, channel: string): Promise<number>;
  rxagentQueueMessage(lease: string, queue: string, meta: string, token: string, element: string, steering: number, followUp: number, channel: string): Promise<number>;
  rxagentUnqueue(lease: string, queue: string, meta: string, token: string, steering: number, followUp: number, channel: string, ...elements: string[]): Promise<number>;
  rxagentMarkBroken(lease: string, meta: string, token: string): Promise<number>;
  rxagentReplaceTranscript(lease: string, transcript: string, token: string, ...elements: string[]): Promise<number>;
  rxagentCountTakeover(lease: string, meta: string, token: string): Promise<number>;
  rxagentAppendFrame(lease: string, events: string, meta: string, token: string, seq: number, type: string, json: string, maxLength: number, ttlMs: number, channel: string): Promise<number>;
  rxagentStartRun(lease: string, meta: string, token: string, runSeq: number, runLength: number): Promise<number>;
  rxagentResetSession(lease: string, transcript: string, events: string, meta: string, queue: string, token: string, seq: number, epoch: string, json: string, channel: string): Promise<number>;
}

export function withSessionScripts(redis: Redis): ScriptedRedis {
  for (const [name, { numberOfKeys, lua }] of Object.entries(SCRIPTS)) {
    if (!(name in redis)) redis.defineCommand(name, { numberOfKeys, lua });
  }
  return redis as ScriptedRedis;
}
