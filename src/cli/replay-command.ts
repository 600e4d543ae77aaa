import { demoTools } from "../demo/demo-tools.js";
import { errorText } from "../errors.js";
import { Agent } from "../agent/agent.js";
import type { Cassette } from "../testing/cassette.js";
import { cassetteModel } from "../testing/cassette-model.js";
import type { AgentEvent } from "../types.js";
import { replayInputs, type ReplayInput } from "./replay-inputs.js";
import { initialRenderState, type RenderState, renderEvent } from "./terminal-renderer.js";
import { TerminalScreen } from "./terminal-screen.js";

export interface ReplayOptions {
  cassette: Cassette;
  /** Shown in the banner. */
  file: string;
  /** The folder the file tools may read, as when recording. */
  root: string;
  /** Time between the calculator's progress steps. */
  toolStepDelay: number;
  /** Divides the recorded delays; `Infinity` plays each reply at once. */
  speed: number;
  /** Print the raw events as JSON Lines on stdout; everything else goes to stderr. */
  json: boolean;
  output: NodeJS.WritableStream;
  errorOutput: NodeJS.WritableStream;
  color: boolean;
}

/**
 * `rxagent replay <file>`: replays a session recorded with `rxagent chat --record`, offline,
 * with the same tools: the cassette answers every model call, the lines typed then are typed
 * again (a prompt when the agent is idle, steering right after the reply that asked for tools),
 * and the screen is printed as the chat printed it. A request that differs from the recording
 * shows as an error message with the differences.
 *
 * Contract: resolves with 0 once every recorded input was replayed and the agent is idle.
 */
export function runReplay(options: ReplayOptions): Promise<number> {
  return new Promise((resolve) => {
    const screen = new TerminalScreen(options.json ? options.errorOutput : options.output, { live: false, color: options.color });
    const agent = new Agent({
      model: cassetteModel(options.cassette, { speed: options.speed }),
      tools: demoTools({ root: options.root, stepDelay: options.toolStepDelay }),
      ...(options.cassette.calls[0]?.request.systemPrompt === undefined ? {} : { systemPrompt: options.cassette.calls[0].request.systemPrompt }),
      onWarning: (message) => notice(message),
    });
    const pending: ReplayInput[] = replayInputs(options.cassette);
    let render: RenderState = initialRenderState;
    let modelCalls = 0;

    function notice(text: string): void {
      if (options.json) options.errorOutput.write(`${text}\n`);
      else screen.write([{ text: render.atLineStart ? "" : "\n", style: "plain" }, { text: `${text}\n`, style: "warning" }]);
      render = { ...render, atLineStart: true };
    }

    function onEvent(event: AgentEvent): void {
      if (event.type === "message_end" && (event.message as { role?: string }).role === "assistant") {
        modelCalls += 1;
        // Steering typed while the tools ran reaches the next model call, as it did then.
        steerBefore(modelCalls);
      }
      if (options.json) {
        options.output.write(`${JSON.stringify(event)}\n`);
        return;
      }
      const rendered = renderEvent(render, event, { echoPrompt: true });
      render = rendered.state;
      screen.write(rendered.output);
    }

    function steerBefore(call: number): void {
      while (pending[0]?.kind === "steer" && pending[0].beforeCall <= call) agent.steer(pending.shift()!.text);
    }

    function next(): void {
      const input = pending.shift();
      if (input === undefined) {
        screen.close();
        agent.dispose();
        resolve(0);
        return;
      }
      if (input.kind === "reset") {
        agent.reset();
        render = initialRenderState;
        next();
        return;
      }
      agent.prompt(input.text).subscribe({
        next: onEvent,
        error: (error: unknown) => {
          notice(`The run failed: ${errorText(error)}`);
          next();
        },
        complete: next,
      });
      steerBefore(input.beforeCall);
    }

    const banner = `rxagent · replaying ${options.file} (${options.cassette.model.id} via ${options.cassette.model.provider}, ${options.cassette.calls.length} model calls)`;
    if (options.json) options.errorOutput.write(`${banner}\n`);
    else screen.write([{ text: `${banner}\n`, style: "dim" }]);
    next();
  });
}
