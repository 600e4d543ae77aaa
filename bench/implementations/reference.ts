import { Agent, agentLoop, runAgentLoop } from "@mariozechner/pi-agent-core";
import type { AgentMessage, AgentTool, AgentLoopConfig, StreamFn } from "@mariozechner/pi-agent-core";
import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";
import type { AssistantMessageEvent, Message, Model } from "@mariozechner/pi-ai";
import { Type } from "typebox";
import type { ModelEvent } from "../../src/index.js";
import { BENCH_TOOL_NAME } from "../workloads/replies.js";
import { playPieces } from "../workloads/streamed.js";
import { benchPrompt, convertWhole, type Implementation, type Scenario, type ToolBody } from "./implementation.js";

/**
 * `@mariozechner/pi-agent-core` through its public `runAgentLoop`, with a synchronous `emit`
 * (its cheapest use: `agentLoop` would add an `EventStream` queue and a `for await` on top).
 * The `streamFn` builds an `AssistantMessageEventStream` and pushes the same precomputed events
 * into it, all at once (or after `modelDelayMs` on a real timer). Idle agents use its `Agent`.
 */
export const reference: Implementation = {
  name: "reference",
  supportsConcurrencyLimit: false,
  async run(scenario, onEvent) {
    if (scenario.conversion?.mode === "per-message") throw new Error("reference: no per-message conversion");
    await runAgentLoop([benchPrompt()], context(scenario.tool), configFor(scenario), onEvent, undefined, replayStream(scenario));
  },
  async idleAgent(scenario) {
    const agent = new Agent({
      initialState: { systemPrompt: "Bench.", model, tools: context(scenario.tool).tools },
      convertToLlm,
      streamFn: replayStream(scenario),
      toolExecution: "parallel",
    });
    await agent.prompt(benchPrompt());
    return agent;
  },
  async agentSession(scenario, prompts, onEvent) {
    if (scenario.conversion?.mode === "per-message") throw new Error("reference: no per-message conversion");
    const agent = new Agent({
      initialState: { systemPrompt: "Bench.", model, tools: context(scenario.tool).tools },
      convertToLlm: configFor(scenario).convertToLlm,
      streamFn: replayStream(scenario),
      toolExecution: "parallel",
    });
    const unsubscribe = agent.subscribe(onEvent);
    for (let prompt = 0; prompt < prompts; prompt++) await agent.prompt(benchPrompt(`Go ${prompt}.`));
    unsubscribe();
  },
};

/**
 * The reference's other public path, `agentLoop`: the same loop pushing every event into an
 * `EventStream` that the caller reads with `for await` (an await per event), as its README shows.
 * Measured beside `runAgentLoop` so a reader sees rxagent against both. Agents are the same `Agent`.
 */
export const referenceEventStream: Implementation = {
  ...reference,
  name: "referenceEventStream",
  async run(scenario, onEvent) {
    if (scenario.conversion?.mode === "per-message") throw new Error("reference: no per-message conversion");
    const events = agentLoop([benchPrompt()], context(scenario.tool), configFor(scenario), undefined, replayStream(scenario));
    for await (const event of events) onEvent(event);
  },
};

function configFor({ conversion }: Scenario): AgentLoopConfig {
  if (conversion === undefined) return config;
  return { ...config, convertToLlm: (messages) => convertWhole(conversion, messages) as unknown as Message[] };
}

/** What pi-agent-core sends to the model: the same role filter as rxagent's default. */
function convertToLlm(messages: AgentMessage[]): Message[] {
  return messages.filter(
    (message): message is Message => message.role === "user" || message.role === "assistant" || message.role === "toolResult",
  );
}

const model = {
  id: "bench",
  name: "bench",
  api: "bench",
  provider: "bench",
  baseUrl: "",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 1_000_000,
} as unknown as Model<never>;

const config: AgentLoopConfig = { model, convertToLlm, toolExecution: "parallel" };

const parameters = Type.Object({ n: Type.Number() });

/** For a call made without a signal (the bench always runs with none): one that never fires. */
const neverAborted = new AbortController().signal;

function context(body: ToolBody) {
  const tool: AgentTool<typeof parameters> = {
    name: BENCH_TOOL_NAME,
    label: BENCH_TOOL_NAME,
    description: "Bench tool",
    parameters,
    // Promise.resolve returns a Promise body's own Promise unchanged, so no extra tick for it.
    execute: (_toolCallId, args, signal) => Promise.resolve(body(args, { signal: signal ?? neverAborted })),
  };
  return { systemPrompt: "Bench.", messages: [] as AgentMessage[], tools: [tool] };
}

function replayStream(scenario: Scenario): StreamFn {
  let call = 0;
  const { replies, modelDelayMs, toolCallGapMs } = scenario;
  return () => {
    // Modulo: an agent session answers every prompt with the replies from the first on.
    const reply = replies[call++ % replies.length] as readonly AssistantMessageEvent[] | undefined;
    if (reply === undefined) throw new Error(`bench model: no reply for call #${call}`);
    const stream = createAssistantMessageEventStream();
    const push = () => {
      for (let index = 0; index < reply.length; index++) stream.push(reply[index]!);
    };
    if (toolCallGapMs !== undefined) playPieces(reply as readonly ModelEvent[], toolCallGapMs, (event) => stream.push(event as AssistantMessageEvent), () => undefined);
    else if (modelDelayMs === undefined) push();
    else setTimeout(push, modelDelayMs);
    return stream;
  };
}
