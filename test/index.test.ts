import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import * as rxagent from "../src/index.js";

// The public surface of `rxagent` as a list: a name that leaks into the barrel (or drops out of it)
// shows up here as a diff, not in a user's autocomplete.

const runtimeNames = [
  "Agent",
  "AssistantMessageDraft",
  "BufferOverflowError",
  "DEFAULT_MAX_AGENT_DEPTH",
  "DEFAULT_TOOL_TIMEOUT_MS",
  "FINAL_ANSWER_TOOL",
  "HookError",
  "INTERRUPTED_TOOL_TEXT",
  "InvalidConfigError",
  "InvalidStateError",
  "MessageQueue",
  "RxAgentError",
  "agentLoop",
  "agentLoopContinue",
  "agentTool",
  "compactedMessages",
  "compaction",
  "defineTool",
  "errorResult",
  "errorText",
  "finalAnswerReminder",
  "finalAnswerTool",
  "fromAbortSignal",
  "hasToolCall",
  "initialAgentState",
  "innermostEventOf",
  "isCompactionSummary",
  "isToolResult",
  "isTransientFailure",
  "mergeMapCapped",
  "missingToolResults",
  "parsePartialJson",
  "queuedFrom",
  "reduceAgentState",
  "runUsage",
  "stepCountIs",
  "subAgentTask",
  "subAgentUpdateOf",
  "textResult",
  "toAsyncIterable",
  "usageExceeds",
  "validateArguments",
  "withFallback",
  "withRetry",
];

const source = path.resolve(import.meta.dirname, "../src");

describe("the public barrel", () => {
  it("exports exactly the listed runtime names", () => {
    expect(Object.keys(rxagent).sort()).toEqual(runtimeNames);
  });

  it("keeps the plumbing out", () => {
    for (const name of ["callHook", "fromHookResult", "pairToolCalls", "compileSchema", "emptyUsage", "isModelMessage", "toolCallsOf"]) {
      expect(Object.keys(rxagent)).not.toContain(name);
    }
  });

  it("names every export in every entry point and in the protocol's types (no export *)", () => {
    const entries = ["index.ts", "types.ts", ...readdirSync(source, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((folder) => path.join(folder.name, "index.ts"))];
    const starred = entries
      .map((entry) => path.join(source, entry))
      .filter((file) => existsSync(file) && /^\s*export\s+\*/m.test(readFileSync(file, "utf8")));
    expect(starred).toEqual([]);
  });
});
