/** `rxagent/redis` (Node only, needs the optional peer `ioredis`): sessions shared by several processes through Redis. */

export { RedisTranscriptStore } from "./redis-transcript-store.js";
export type { RedisTranscriptStoreOptions } from "./redis-transcript-store.js";
export { DEFAULT_KEY_PREFIX, sessionKeys } from "./session-keys.js";
export type { SessionKeys } from "./session-keys.js";
