import { pathToFileURL } from "node:url";
import { Type } from "@sinclair/typebox";
import { lastValueFrom, Observable } from "rxjs";
import type { AgentLoopConfig, AgentTool, Model, ModelEvent } from "../../src/index.js";
import { BENCH_TOOL_NAME } from "../workloads/replies.js";
import { playPieces } from "../workloads/streamed.js";
import { benchPrompt, convertWhole, type EventSink, type Implementation, type Scenario, type ToolBody } from "./implementation.js";

export type Rxagent = typeof import("../../src/index.js");

/** rxagent from a built `index.js` (`loadRxagent`; cold-child.ts: the build the bench made). */
export async function rxagentAt(entry: string): Promise<Implementation> {
  return createRxagent((await import(pathToFileURL(entry).href)) as Rxagent);
}

/** rxagent from a build made elsewhere (bench/ab.ts compares two). */
export async function loadRxagentFrom(entry: string): Promise<Implementation> {
  return createRxagent((await import(pathToFileURL(entry).href)) as Rxagent);
}

/**
 * rxagent through its public `agentLoop` (and `Agent` for idle agents). The model replays the
 * precomputed replies: with no delay it emits them synchronously from the array (no per-call
 * work besides the loop's own), with `modelDelayMs` it waits on a real timer first.
 */
export function createRxagent({ Agent, agentLoop, defineTool }: Rxagent): Implementation {
  const parameters = Type.Object({ n: Type.Number() });
  const benchTool = (body: ToolBody): AgentTool =>
    // The context is passed on as it is: its signal is made only when a body reads it.
    defineTool({ name: BENCH_TOOL_NAME, description: "Bench tool", parameters, execute: (_toolCallId, args, context) => body(args, context) }) as AgentTool;
  return {
    name: "rxagent",
    supportsConcurrencyLimit: true,
    run(scenario, onEvent) {
      const config: AgentLoopConfig = {
        model: replayModel(scenario),
        ...(scenario.maxConcurrency === undefined ? {} : { maxConcurrency: scenario.maxConcurrency }),
        ...conversionOptions(scenario),
        ...(scenario.eagerTools ? { eagerTools: true } : {}),
      };
      return new Promise<void>((resolve, reject) => {
        agentLoop([benchPrompt()], { systemPrompt: "Bench.", messages: [], tools: [benchTool(scenario.tool)] }, config).subscribe({
          next: onEvent,
          error: reject,
          complete: resolve,
        });
      });
    },
    async idleAgent(scenario) {
      const agent = new Agent({ model: replayModel(scenario), systemPrompt: "Bench.", tools: [benchTool(scenario.tool)] });
      await lastValueFrom(agent.prompt(benchPrompt()));
      return agent;
    },
    async agentSession(scenario, prompts, onEvent) {
      const agent = new Agent({ model: replayModel(scenario), systemPrompt: "Bench.", tools: [benchTool(scenario.tool)], ...conversionOptions(scenario) });
      for (let prompt = 0; prompt < prompts; prompt++) await runPrompt(agent.prompt(benchPrompt(`Go ${prompt}.`)), onEvent);
      agent.dispose();
    },
  };
}

function runPrompt(events: Observable<{ type: string }>, onEvent: EventSink): Promise<void> {
  return new Promise<void>((resolve, reject) => events.subscribe({ next: onEvent, error: reject, complete: resolve }));
}

/**
 * The scenario's conversion as rxagent's options, as a new function per run: `convertMessageToLlm`
 * caches by function, and the replies' messages are shared between runs.
 */
function conversionOptions({ conversion }: Scenario): Pick<AgentLoopConfig, "convertToLlm" | "convertMessageToLlm"> {
  if (conversion === undefined) return {};
  if (conversion.mode === "whole") return { convertToLlm: (messages) => convertWhole(conversion, messages) };
  return { convertMessageToLlm: (message) => conversion.convert(message as Parameters<typeof conversion.convert>[0]) };
}

function replayModel(scenario: Scenario): Model {
  let call = 0;
  const { replies, modelDelayMs, toolCallGapMs } = scenario;
  return {
    id: "bench",
    provider: "bench",
    api: "bench",
    stream: () =>
      new Observable<ModelEvent>((subscriber) => {
        // Modulo: an agent session answers every prompt with the replies from the first on.
        const reply = replies[call++ % replies.length];
        if (reply === undefined) {
          subscriber.error(new Error(`bench model: no reply for call #${call}`));
          return undefined;
        }
        const emit = () => {
          for (let index = 0; index < reply.length && !subscriber.closed; index++) subscriber.next(reply[index]!);
          subscriber.complete();
        };
        if (toolCallGapMs !== undefined) {
          return playPieces(reply, toolCallGapMs, (event) => subscriber.next(event), () => subscriber.complete());
        }
        if (modelDelayMs === undefined) {
          emit();
          return undefined;
        }
        const timer = setTimeout(emit, modelDelayMs);
        return () => clearTimeout(timer);
      }),
  };
}
