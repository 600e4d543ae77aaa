import type { AgentEvent, AgentMessage, AssistantMessage, Message, ModelEvent, ToolCall, ToolResultMessage } from "../../src/index.js";
import type { BenchToolArguments } from "../workloads/replies.js";
import { type BenchEvent, benchPrompt, type BenchToolResult, convertWhole, type Implementation, sleep, type Scenario, type ToolBodyContext } from "./implementation.js";

/**
 * The floor: a hand-written loop that emits the same event sequence (same types, same counts)
 * to a callback, with none of a real loop's guarantees (no validation, hooks, abort, queues).
 * It only awaits when something is actually asynchronous (a tool Promise, a model delay).
 */
export const floor: Implementation = {
  name: "floor",
  supportsConcurrencyLimit: true,
  run(scenario, onEvent) {
    return floorRun(scenario, onEvent as AgentSink, [], { converted: [], seen: 0 }, benchPrompt());
  },
  async idleAgent(scenario) {
    // What a plain loop keeps between runs: the transcript.
    const transcript: BenchEvent[] = [];
    await floor.run(scenario, (event) => {
      if (event.type === "message_end") transcript.push((event as unknown as { message: BenchEvent }).message);
    });
    return transcript;
  },
  async agentSession(scenario, prompts, onEvent) {
    // What a plain loop keeps between prompts: the transcript, and its conversion so far.
    const messages: AgentMessage[] = [];
    const conversion: ConversionState = { converted: [], seen: 0 };
    for (let prompt = 0; prompt < prompts; prompt++) await floorRun(scenario, onEvent as AgentSink, messages, conversion, benchPrompt(`Go ${prompt}.`));
  },
};

/** The floor's own conversion bookkeeping: the model messages so far, and how much of the transcript they cover. */
interface ConversionState {
  converted: Message[];
  seen: number;
}

/** How a loop runs one reply's tool calls: synchronously when every body is, else a Promise of the results in call order. */
export type ToolRunner = (scenario: Scenario, toolCalls: ToolCall[], onEvent: AgentSink) => ToolResultMessage[] | Promise<ToolResultMessage[]>;

/** A run of the floor's loop with `tools` running each reply's calls (the design's shape, say: design-shape.ts). */
export function floorRunWith(tools: ToolRunner, scenario: Scenario, onEvent: AgentSink): Promise<void> {
  return floorRun(scenario, onEvent, [], { converted: [], seen: 0 }, benchPrompt(), tools);
}

/** One run of the scripted conversation, appending to `messages`. */
async function floorRun(scenario: Scenario, emit: AgentSink, messages: AgentMessage[], conversion: ConversionState, prompt: AgentMessage, tools: ToolRunner = runTools): Promise<void> {
  const newMessages: AgentMessage[] = [prompt];
  messages.push(prompt);
  emit({ type: "agent_start" });
  emit({ type: "turn_start" });
  emit({ type: "message_start", message: prompt });
  emit({ type: "message_end", message: prompt });
  for (let call = 0; call < scenario.replies.length; call++) {
    if (call > 0) emit({ type: "turn_start" });
    if (scenario.conversion) modelContext(scenario.conversion, messages, conversion);
    if (scenario.modelDelayMs !== undefined) await sleep(scenario.modelDelayMs);
    const message = replay(scenario.replies[call]!, emit);
    messages.push(message);
    newMessages.push(message);
    const toolCalls = message.content.filter((block): block is ToolCall => block.type === "toolCall");
    const outputs = tools(scenario, toolCalls, emit);
    const results = outputs instanceof Promise ? await outputs : outputs;
    for (const result of results) {
      emit({ type: "message_start", message: result });
      emit({ type: "message_end", message: result });
      messages.push(result);
      newMessages.push(result);
    }
    emit({ type: "turn_end", message, toolResults: results });
  }
  emit({ type: "agent_end", messages: newMessages });
}

/** What the model would be sent: the whole transcript converted, or only what is new since the last call. */
function modelContext(conversion: NonNullable<Scenario["conversion"]>, messages: readonly AgentMessage[], state: ConversionState): readonly Message[] {
  if (conversion.mode === "whole") return convertWhole(conversion, messages);
  for (; state.seen < messages.length; state.seen++) {
    const message = messages[state.seen]!;
    if (message.role === "user" || message.role === "assistant" || message.role === "toolResult") state.converted.push(conversion.convert(message));
  }
  return state.converted;
}

/** A run without a signal shares one that never fires, as a plain loop would. */
const floorToolContext: ToolBodyContext = { signal: new AbortController().signal };

/** The floor emits rxagent's event shapes (the reference's are the same). */
export type AgentSink = (event: AgentEvent) => void;

function replay(reply: readonly ModelEvent[], onEvent: AgentSink): AssistantMessage {
  for (const event of reply) {
    switch (event.type) {
      case "start":
        onEvent({ type: "message_start", message: event.partial });
        break;
      case "done":
        onEvent({ type: "message_end", message: event.message });
        return event.message;
      case "error":
        onEvent({ type: "message_end", message: event.error });
        return event.error;
      default:
        onEvent({ type: "message_update", message: event.partial, assistantMessageEvent: event });
    }
  }
  throw new Error("floor: a reply without done");
}

/** Runs the calls, at most `maxConcurrency` at once; synchronous when every body is. */
function runTools(
  scenario: Scenario,
  toolCalls: ToolCall[],
  onEvent: AgentSink,
): ToolResultMessage[] | Promise<ToolResultMessage[]> {
  const results: ToolResultMessage[] = [];
  const limit = Math.min(scenario.maxConcurrency ?? Infinity, toolCalls.length);
  for (const toolCall of toolCalls) {
    onEvent({ type: "tool_execution_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments });
  }
  // rxagent announces the calls past the limit as waiting for a slot; the floor does the same work.
  for (let index = limit; index < toolCalls.length; index++) {
    const toolCall = toolCalls[index]!;
    onEvent({ type: "tool_slot_wait_start", toolCallId: toolCall.id, toolName: toolCall.name, since: 0 });
  }
  const finish = (index: number, result: BenchToolResult) => {
    const toolCall = toolCalls[index]!;
    onEvent({ type: "tool_execution_end", toolCallId: toolCall.id, toolName: toolCall.name, result, isError: false });
    results[index] = {
      role: "toolResult",
      toolCallId: toolCall.id,
      toolName: toolCall.name,
      content: result.content,
      details: result.details,
      isError: false,
      timestamp: 0,
    };
  };
  let next = 0;
  const worker = (): Promise<void> | undefined => {
    while (next < toolCalls.length) {
      const index = next++;
      if (index >= limit) onEvent({ type: "tool_slot_wait_end", toolCallId: toolCalls[index]!.id, toolName: toolCalls[index]!.name });
      const output = scenario.tool(toolCalls[index]!.arguments as BenchToolArguments, floorToolContext);
      if (output instanceof Promise) {
        return output.then((result) => {
          finish(index, result);
          return worker();
        });
      }
      finish(index, output);
    }
    return undefined;
  };
  const workers: Promise<void>[] = [];
  for (let slot = 0; slot < limit; slot++) {
    const pending = worker();
    if (pending) workers.push(pending);
  }
  return workers.length === 0 ? results : Promise.all(workers).then(() => results);
}
