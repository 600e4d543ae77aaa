import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, it } from "vitest";
import { RedisTranscriptStore } from "../../src/redis/redis-transcript-store.js";
import { expectReopenedFromSummary } from "../helpers/compaction-session.js";
import { hasRedisServer, RedisServerProcess } from "./redis-server.js";

describe.skipIf(!hasRedisServer)("compaction with the Redis transcript store", () => {
  let server: RedisServerProcess;
  let redis: Redis;

  beforeAll(async () => {
    server = await RedisServerProcess.start();
    redis = new Redis(server.url, { lazyConnect: true });
    await redis.connect();
  }, 30_000);

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it("keeps the summaries in the list, and a session reopened from Redis continues from the last", async () => {
    const store = new RedisTranscriptStore(redis, "compacted");
    await expectReopenedFromSummary(store, () => store.flush(), () => new RedisTranscriptStore(redis, "compacted"));
  });
});
