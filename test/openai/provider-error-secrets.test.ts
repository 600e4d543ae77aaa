import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { openaiChat } from "../../src/openai/index.js";
import { type AgentServer, JsonlTranscriptStore, serveAgents } from "../../src/server/index.js";
import type { AssistantMessage } from "../../src/types.js";
import { type ReplayServer, startReplayServer } from "../helpers/sse-replay-server.js";
import { RawClient, waitFor } from "../server/helpers.js";

// Issue 27, row 8: a provider 401 whose message quotes the API key (some proxies do) reached
// WebSocket frames, the JSONL transcript and `chat --json` verbatim.
const apiKey = "proxy-key-0042-do-not-leak";
const openaiLikeKey = "sk-proj-abcdefgh12345678";
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("provider errors never carry a key", () => {
  it("blanks the key a 401 quotes in errorMessage, in ws frames and in the JSONL transcript", async () => {
    const provider: ReplayServer = await startReplayServer([
      {
        kind: "http-error",
        status: 401,
        body: { error: { message: `Incorrect API key provided: ${apiKey} (Authorization: Bearer ${apiKey}; upstream ${openaiLikeKey})`, type: "invalid_request_error", code: "invalid_api_key" } },
      },
    ]);
    cleanup.push(() => provider.close());
    const directory = mkdtempSync(join(tmpdir(), "rxagent-secrets-"));
    cleanup.push(() => rmSync(directory, { recursive: true, force: true }));
    const transcript = join(directory, "s.jsonl");
    const server: AgentServer = await serveAgents({
      port: 0,
      heartbeatIntervalMs: 0,
      createAgent: () => new Agent({ model: openaiChat({ model: "gpt-test", apiKey, baseURL: provider.baseURL }), store: new JsonlTranscriptStore(transcript) }),
    });
    cleanup.push(() => server.close());
    const client = await RawClient.open(server.url);
    cleanup.push(() => client.socket.terminate());
    const rawFrames: string[] = [];
    client.socket.on("message", (data) => rawFrames.push(String(data)));
    await client.request({ type: "attach", session: "s" });
    await client.request({ type: "prompt", input: "Hello" });
    await waitFor(() => client.hasEvent("agent_end") || undefined, "agent_end");

    const failed = server.session("s")!.agent.state.messages.at(-1) as AssistantMessage;
    expect(failed.stopReason).toBe("error");
    expect(failed.errorMessage).toBe("401 Incorrect API key provided: [redacted] (Authorization: Bearer [redacted]; upstream [redacted])");
    for (const [where, text] of [["ws frames", rawFrames.join("\n")], ["the JSONL transcript", readFileSync(transcript, "utf8")]] as const) {
      expect({ where, leaks: [apiKey, openaiLikeKey].filter((secret) => text.includes(secret)) }).toStrictEqual({ where, leaks: [] });
      expect(text).toContain("[redacted]");
    }
  });
});
