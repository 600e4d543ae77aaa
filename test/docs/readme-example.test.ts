import { describe, expect, it } from "vitest";
import { map } from "rxjs";
import { agentLoop } from "../../src/index.js";
import type { AgentEventType } from "../../src/index.js";
import { configureMarbles, scriptedModel } from "../../src/testing/index.js";

// docs/testing.md's "Testing your agent" example, verbatim but for the imports: keep them in step.
const marbles = configureMarbles((actual, expected) => expect(actual).toStrictEqual(expected));

describe("README", () => {
  it(
    "streams a reply",
    marbles(({ scheduler, expectObservable }) => {
      const model = scriptedModel(["Hi there"], { scheduler, delay: 10 });
      const prompt = { role: "user" as const, content: "Hello", timestamp: 0 };
      const run = agentLoop([prompt], { messages: [] }, { model, scheduler });
      const letter: Record<AgentEventType, string> = {
        agent_start: "a", turn_start: "t", message_start: "s", message_update: "u", message_end: "e",
        tool_execution_start: "x", tool_execution_update: "p", tool_execution_end: "y", turn_end: "T", agent_end: "A",
        tool_approval_start: "w", tool_approval_end: "W", tool_slot_wait_start: "q", tool_slot_wait_end: "Q",
      };
      expectObservable(run.pipe(map((event) => letter[event.type]))).toBe(
        "(atse) 4ms s 9ms u 9ms u 9ms u 9ms u 9ms (eTA|)",
      );
    }),
  );
});
