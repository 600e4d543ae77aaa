import type * as Reference from "@mariozechner/pi-agent-core";
import * as ReferenceModule from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import * as DropIn from "../../src/pi-agent-core/index.js";

// The drop-in's surface against @mariozechner/pi-agent-core 0.73.1's own declarations. The
// assignments are checked by the type check in `npm test` (test/house/type-check.test.ts); a signature that drifts fails
// the type check, not a runtime assertion.

/** True when each type is assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The public members of a class instance (a class with private members is nominal). */
type PublicOf<T> = { [Key in keyof T]: T[Key] };

// Functions: the drop-in's may stand where the reference's are expected.
export const functions: {
  agentLoop: typeof Reference.agentLoop;
  agentLoopContinue: typeof Reference.agentLoopContinue;
  runAgentLoop: typeof Reference.runAgentLoop;
  runAgentLoopContinue: typeof Reference.runAgentLoopContinue;
  streamProxy: typeof Reference.streamProxy;
} = DropIn;

// The Agent: constructed from the reference's options, usable wherever the reference's instance is.
export const agentFromReferenceOptions = (options: Reference.AgentOptions): PublicOf<Reference.Agent> => new DropIn.Agent(options);
export const optionsBothWays: Same<DropIn.AgentOptions, Reference.AgentOptions> = true;

// The types, in both directions.
export const types: [
  Same<DropIn.AgentEvent, Reference.AgentEvent>,
  Same<DropIn.AgentMessage, Reference.AgentMessage>,
  Same<DropIn.AgentState, Reference.AgentState>,
  Same<DropIn.AgentTool, Reference.AgentTool>,
  Same<DropIn.AgentToolResult<unknown>, Reference.AgentToolResult<unknown>>,
  Same<DropIn.AgentToolCall, Reference.AgentToolCall>,
  Same<DropIn.AgentContext, Reference.AgentContext>,
  Same<DropIn.AgentLoopConfig, Reference.AgentLoopConfig>,
  Same<DropIn.AgentEventSink, Reference.AgentEventSink>,
  Same<DropIn.BeforeToolCallContext, Reference.BeforeToolCallContext>,
  Same<DropIn.BeforeToolCallResult, Reference.BeforeToolCallResult>,
  Same<DropIn.AfterToolCallContext, Reference.AfterToolCallContext>,
  Same<DropIn.AfterToolCallResult, Reference.AfterToolCallResult>,
  Same<DropIn.ShouldStopAfterTurnContext, Reference.ShouldStopAfterTurnContext>,
  Same<DropIn.StreamFn, Reference.StreamFn>,
  Same<DropIn.ThinkingLevel, Reference.ThinkingLevel>,
  Same<DropIn.ToolExecutionMode, Reference.ToolExecutionMode>,
  Same<DropIn.ProxyAssistantMessageEvent, Reference.ProxyAssistantMessageEvent>,
  Same<DropIn.ProxyStreamOptions, Reference.ProxyStreamOptions>,
  Same<DropIn.AgentToolUpdateCallback, Reference.AgentToolUpdateCallback>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];

describe("rxagent/pi-agent-core's exports", () => {
  it("has the reference's runtime exports, no fewer and no more", () => {
    expect(Object.keys(DropIn).sort()).toEqual(Object.keys(ReferenceModule).sort());
  });
});
