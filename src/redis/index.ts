/** `rxagent/redis` (Node only, needs the optional peer `ioredis`): sessions shared by several processes through Redis. */

export { redisSessions } from "./redis-sessions.js";
export type { RedisSessions, RedisSessionsOptions } from "./redis-sessions.js";
export { TAKEOVER_TEXT, takeoverLimitText } from "./session-takeover.js";
export { RedisTranscriptStore } from "./redis-transcript-store.js";
export { SESSION_MOVED_TEXT, transcriptLostText } from "./session-runner.js";
export type { RedisTranscriptStoreOptions } from "./redis-transcript-store.js";
export { DEFAULT_KEY_PREFIX, sessionKeys } from "./session-keys.js";
export type { SessionKeys } from "./session-keys.js";
