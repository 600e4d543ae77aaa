import { describe, expectTypeOf, it } from "vitest";
import type { AgentEvent, AgentToolResult } from "../../src/index.js";

// Checked by the type check in `npm test` (test/house/type-check.test.ts): tool events carry typed results.
describe("AgentEvent", () => {
  it("types tool results as AgentToolResult, with details typed by the optional parameter", () => {
    type Update = Extract<AgentEvent, { type: "tool_execution_update" }>;
    type End = Extract<AgentEvent<{ exitCode: number }>, { type: "tool_execution_end" }>;
    expectTypeOf<Update["partialResult"]>().toEqualTypeOf<AgentToolResult<unknown>>();
    expectTypeOf<End["result"]>().toEqualTypeOf<AgentToolResult<{ exitCode: number }>>();
    expectTypeOf<End["result"]["details"]["exitCode"]>().toEqualTypeOf<number>();
  });
});
