import { pathToFileURL } from "node:url";
import { Type } from "@sinclair/typebox";
import { lastValueFrom, Observable } from "rxjs";
import type { AgentTool, Model, ModelEvent } from "../../src/index.js";
import { buildRxagent } from "../build-rxagent.js";
import { BENCH_TOOL_NAME } from "../workloads/replies.js";
import { playPieces } from "../workloads/streamed.js";
import { benchPrompt, type Implementation, type Scenario, type ToolBody } from "./implementation.js";

type Rxagent = typeof import("../../src/index.js");

/**
 * rxagent as JavaScript transpiled from `src/` (`"build"`, what the bench measures; see
 * `buildRxagent`) or run from the TypeScript sources through tsx (`"source"`).
 */
export async function loadRxagent(from: "build" | "source"): Promise<Implementation> {
  const library = (from === "build" ? await import(pathToFileURL(buildRxagent()).href) : await import("../../src/index.js")) as Rxagent;
  return createRxagent(library);
}

/**
 * rxagent through its public `agentLoop` (and `Agent` for idle agents). The model replays the
 * precomputed replies: with no delay it emits them synchronously from the array (no per-call
 * work besides the loop's own), with `modelDelayMs` it waits on a real timer first.
 */
function createRxagent({ Agent, agentLoop, defineTool }: Rxagent): Implementation {
  const parameters = Type.Object({ n: Type.Number() });
  const benchTool = (body: ToolBody): AgentTool =>
    defineTool({ name: BENCH_TOOL_NAME, description: "Bench tool", parameters, execute: (_toolCallId, args) => body(args) }) as AgentTool;
  return {
    name: "rxagent",
    supportsConcurrencyLimit: true,
    run(scenario, onEvent) {
      const config = {
        model: replayModel(scenario),
        ...(scenario.maxConcurrency === undefined ? {} : { maxConcurrency: scenario.maxConcurrency }),
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
  };
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
        const reply = replies[call++];
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
