// A process serving one session on Redis, for resubscribe-refused.test.ts: it prints "listening"
// once it listens to the session's channels, every warning, and "alive" once a warning that it
// could not subscribe again was followed by a round trip to Redis; it exits 0 when stdin closes.
import { Agent } from "../../src/agent/agent.js";
import { redisSessions } from "../../src/redis/index.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";

const [redisUrl] = process.argv.slice(2);
let refused = false;
const sessions = redisSessions({
  redis: redisUrl!,
  createAgent: (_id, store) => Agent.open({ store, model: scriptedModel(["Hello."]) }),
  onWarning: (message) => {
    process.stdout.write(`warning: ${message}\n`);
    if (refused || !message.includes("could not subscribe again")) return;
    refused = true;
    // Two turns after Redis answered: an unhandled rejection of the same reconnection has ended the process by then.
    sessions.ready().then(() => setImmediate(() => setImmediate(() => process.stdout.write("alive\n"))));
  },
});
await sessions.hostSession("s1");
process.stdout.write("listening\n");
process.stdin.resume();
process.stdin.on("end", () => {
  sessions.close().then(() => process.exit(0));
});
