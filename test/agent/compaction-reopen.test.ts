import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";
import { JsonlTranscriptStore } from "../../src/server/jsonl-transcript-store.js";
import { expectReopenedFromSummary } from "../helpers/compaction-session.js";

describe("compaction in an Agent's transcript", () => {
  it("is kept by the JSONL store, and a reopened session continues from the summary", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-compaction-")), "transcript.jsonl");
    const store = new JsonlTranscriptStore(path);
    await expectReopenedFromSummary(store, async () => store.close(), () => new JsonlTranscriptStore(path));
  });
});
