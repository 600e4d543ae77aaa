import { randomUUID } from "node:crypto";
import { interval, type Observable, type Subscription } from "rxjs";
import { demoTools } from "../demo/demo-tools.js";
import { errorText } from "../errors.js";
import { Agent } from "../agent/agent.js";
import type { AgentEvent, AgentTool } from "../types.js";
import { innermostEventOf } from "../types/sub-agent.js";
import type { Styled } from "./ansi.js";
import { chatHelp, parseChatCommand } from "./chat-commands.js";
import type { Instrument } from "./console-telemetry.js";
import { InputReader } from "./input-reader.js";
import type { ModelChoice } from "./model-from-environment.js";
import { initialRenderState, type RenderState, renderEvent, statusLine } from "./terminal-renderer.js";
import { TerminalScreen } from "./terminal-screen.js";

export interface ChatOptions {
  choice: ModelChoice;
  /** The folder the file tools may read. */
  root: string;
  /** Print the raw events as JSON Lines on stdout; everything else goes to stderr. */
  json: boolean;
  /** Time between the calculator's progress steps. */
  toolStepDelay: number;
  /** The agent's tools, a live array (MCP servers' lists change in it); default: the demo tools. */
  tools?: AgentTool[];
  /** Sent as the first line, before anything is read. */
  initialPrompt?: string;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  errorOutput: NodeJS.WritableStream;
  /** Colour on: a terminal and no `NO_COLOR`. */
  color: boolean;
  /** `--eager-tools`: every tool starts at its call's `toolcall_end` (`AgentLoopConfig.eagerTools`). */
  eagerTools?: boolean;
  /** `--otel`: instruments the agent's options (console-telemetry.ts). */
  instrument?: Instrument;
}

/**
 * `rxagent chat`: an interactive agent in the terminal. A line typed while idle starts a run;
 * while it runs, a line steers it, `/later` queues a follow-up, `/cancel` cancels a tool call,
 * `y` / `n` answer a call waiting for approval, Ctrl-C aborts.
 *
 * Contract: resolves with the exit code once the person quits, or once input has ended and
 * the agent is idle with nothing queued.
 */
export function runChat(options: ChatOptions): Promise<number> {
  return new Promise((resolve) => {
    const live = !options.json && options.output.isTTY === true;
    const reader = new InputReader({ input: options.input, output: options.output, prompt: "› " });
    const screen = new TerminalScreen(options.json ? options.errorOutput : options.output, {
      live,
      color: options.color,
      ...(live && reader.interactive ? { input: reader } : {}),
    });
    const agentOptions = {
      model: options.choice.model,
      tools: options.tools ?? demoTools({ root: options.root, stepDelay: options.toolStepDelay }),
      systemPrompt: systemPrompt(options.root),
      onWarning: (message: string) => notice(message, "warning"),
      ...(options.eagerTools ? { eagerTools: true } : {}),
    };
    // One conversation per chat: with `--otel`, every run's spans share its id.
    const agent = new Agent(options.instrument ? options.instrument(agentOptions, randomUUID()) : agentOptions);
    const subscriptions: Subscription[] = [];
    let render: RenderState = initialRenderState;
    let spinner: Subscription | undefined;
    let frame = 0;
    let inputEnded = false;
    let abortRequested = false;
    // The run's tool calls in the order they started: `/cancel n` counts from 1 in this order.
    let runToolCalls: string[] = [];
    let exitArmed = false;
    let finished = false;
    // A terminal already shows the typed prompt; a run started from queued messages does not.
    let echoPrompt = !reader.interactive;

    function notice(text: string, style: Styled["style"] = "dim"): void {
      if (options.json) options.errorOutput.write(`${text}\n`);
      else screen.write([{ text: render.atLineStart ? "" : "\n", style: "plain" }, { text: `${text}\n`, style }]);
      if (!render.atLineStart && !options.json) render = { ...render, atLineStart: true };
    }

    function updateStatus(): void {
      if (live) screen.setStatus(statusLine(render, frame, agent.state));
    }

    function onEvent(event: AgentEvent): void {
      if (event.type === "tool_execution_start") runToolCalls.push(event.toolCallId);
      // A sub-agent's call waits in the agent's pendingApprovals too, so y / n answer it alike.
      const waiting = innermostEventOf(event);
      if (waiting.type === "tool_approval_start") {
        const args = JSON.stringify(waiting.args);
        notice(`? ${waiting.toolName} ${args === "{}" ? "" : `${args} `}needs your approval: type y to run it, n to deny it.`, "warning");
      }
      if (options.json) {
        options.output.write(`${JSON.stringify(event)}\n`);
        return;
      }
      const rendered = renderEvent(render, event, { echoPrompt });
      render = rendered.state;
      screen.write(rendered.output);
      updateStatus();
    }

    function startRun(events: Observable<AgentEvent>, fromQueue = false): void {
      echoPrompt = fromQueue || !reader.interactive;
      abortRequested = false;
      exitArmed = false;
      runToolCalls = [];
      if (live) spinner ??= interval(80).subscribe(() => (frame += 1, updateStatus()));
      events.subscribe({
        next: onEvent,
        error: (error: unknown) => {
          notice(`The run failed: ${errorText(error)}`, "error");
          afterRun();
        },
        complete: afterRun,
      });
    }

    function afterRun(): void {
      if (finished || agent.isRunning) return;
      // Steering typed just as the run ended, or follow-ups: nothing typed is lost.
      if (agent.state.queuedSteering + agent.state.queuedFollowUp > 0) {
        startRun(agent.continue(), true);
        return;
      }
      spinner?.unsubscribe();
      spinner = undefined;
      updateStatus();
      if (inputEnded) finish(0);
    }

    function send(text: string, kind: "message" | "later"): void {
      if (!agent.isRunning) startRun(agent.prompt(text));
      else if (kind === "later") agent.followUp(text);
      else agent.steer(text);
      updateStatus();
    }

    function onLine(line: string): void {
      const command = parseChatCommand(line);
      exitArmed = false;
      if (reader.interactive && live) {
        // While a run streams, a steering line shows in the status line until it is injected
        // (then the renderer prints it), so the line being streamed is not split.
        const quiet = command.kind === "empty" || (agent.isRunning && (command.kind === "message" || command.kind === "later"));
        screen.lineEntered(quiet ? undefined : [{ text: `› ${line.trim()}`, style: "bold" }]);
      }
      // A pending approval takes the next y or n, oldest first; anything else still steers.
      const oldest = agent.state.pendingApprovals[0];
      if (oldest && command.kind === "message" && /^(y|yes|n|no)$/i.test(command.text)) {
        if (/^y/i.test(command.text)) agent.approve(oldest.toolCallId);
        else agent.deny(oldest.toolCallId, "denied in the chat");
        return;
      }
      switch (command.kind) {
        case "empty":
          break;
        case "message":
        case "later":
          send(command.text, command.kind);
          break;
        case "help":
          notice(chatHelp, "plain");
          break;
        case "cancel":
          cancelToolCall(command.number);
          break;
        case "reset":
          agent.reset();
          render = initialRenderState;
          spinner?.unsubscribe();
          spinner = undefined;
          updateStatus();
          notice("The conversation is cleared.");
          break;
        case "quit":
          finish(0);
          break;
        case "unknown":
          notice(`Unknown command ${command.command}. /help lists the commands.`, "warning");
          break;
      }
    }

    function cancelToolCall(number: number | undefined): void {
      const running = agent.state.pendingToolCalls;
      const toolCallId = number === undefined ? running[running.length - 1] : runToolCalls[number - 1];
      if (toolCallId === undefined) {
        notice(number === undefined ? "No tool call is running." : `This run has no tool call #${number} (it has ${runToolCalls.length}).`, "warning");
        return;
      }
      try {
        agent.cancelToolCall(toolCallId, "cancelled in the chat");
      } catch (error) {
        notice(errorText(error), "warning");
      }
    }

    function onInterrupt(): void {
      if (agent.isRunning && !abortRequested) {
        abortRequested = true;
        exitArmed = true;
        // Queued follow-ups would start a new run right after the abort; Ctrl-C means stop.
        const dropped = agent.abort({ clearFollowUps: true });
        const droppedText = droppedSummary(dropped.steering.length, dropped.followUp.length);
        if (droppedText !== undefined) notice(droppedText);
        return;
      }
      if (reader.interactive && reader.pending !== "") {
        reader.clearPending();
        return;
      }
      if (exitArmed || !reader.interactive) {
        finish(0);
        return;
      }
      exitArmed = true;
      notice("(Press Ctrl-C again, or type /quit, to exit.)");
    }

    function finish(code: number): void {
      if (finished) return;
      finished = true;
      if (agent.isRunning) agent.abort({ clearFollowUps: true });
      for (const subscription of subscriptions) subscription.unsubscribe();
      spinner?.unsubscribe();
      screen.close();
      reader.close();
      agent.dispose();
      resolve(code);
    }

    const banner = `rxagent · ${options.choice.description}`;
    if (options.json) options.errorOutput.write(`${banner}\n`);
    else {
      const tips = reader.interactive ? "\nType a message. While the agent works, type to steer it; /help for more." : "";
      screen.write([{ text: `${banner}${tips}\n`, style: "dim" }]);
    }
    subscriptions.push(
      reader.lines.subscribe({
        next: onLine,
        complete: () => {
          inputEnded = true;
          afterRun();
        },
      }),
      reader.interrupts.subscribe(onInterrupt),
    );
    if (options.initialPrompt) send(options.initialPrompt, "message");
  });
}

/** What Ctrl-C dropped besides the run, e.g. "Dropped 1 queued follow-up and 2 steering messages."; nothing when nothing was queued. */
function droppedSummary(steering: number, followUps: number): string | undefined {
  const parts = [
    ...(followUps > 0 ? [`${followUps} queued follow-up${followUps === 1 ? "" : "s"}`] : []),
    ...(steering > 0 ? [`${steering} steering message${steering === 1 ? "" : "s"}`] : []),
  ];
  return parts.length === 0 ? undefined : `Dropped ${parts.join(" and ")}.`;
}

function systemPrompt(root: string): string {
  return [
    "You are a helpful assistant in a terminal, run by rxagent.",
    `Tools: calculator (exact arithmetic), clock (current time), list_files and read_file (inside ${root}), write_file (creates a new file there once the user approves).`,
    "Use a tool whenever it gives a better answer; when several independent tools are needed, call them in the same reply.",
    "The user may add messages while you work: take the newest one into account. Be concise.",
  ].join("\n");
}
