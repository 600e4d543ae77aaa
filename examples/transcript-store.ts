// A conversation kept in a JSON Lines file, picked up again by a new Agent. Run: npx tsx examples/transcript-store.ts
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "rxagent";
import { demoModel } from "rxagent/demo";
import { JsonlTranscriptStore } from "rxagent/server";

const folder = mkdtempSync(join(tmpdir(), "rxagent-example-"));
const path = join(folder, "session.jsonl");

const first = await Agent.open({ model: demoModel({ delay: 0 }), store: new JsonlTranscriptStore(path) });
await first.run("hello");
first.dispose();
console.log("lines on disk:", readFileSync(path, "utf8").trim().split("\n").length);

// A new process (here: a new Agent) opens the same file and goes on from where it was.
const second = await Agent.open({ model: demoModel({ delay: 0 }), store: new JsonlTranscriptStore(path) });
console.log("reopened with", second.messages.length, "messages");
await second.run("hello again");
console.log("now", second.messages.length, "messages");
second.dispose();
rmSync(folder, { recursive: true });
