import { Type } from "@sinclair/typebox";
import { Observable } from "rxjs";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { Model, ModelEvent } from "../../src/types.js";

/** Where a `gatedArgumentsModel` pauses: `reached` is called there, and it goes on once `open` resolves. */
export interface ArgumentsGate {
  reached(): void;
  open: Promise<void>;
}

/** A gate the model stops at, and the test's handles on it. */
export function argumentsGate(): { gate: ArgumentsGate; halfway: Promise<void>; open: () => void } {
  let reached = (): void => undefined;
  let open = (): void => undefined;
  const halfway = new Promise<void>((resolve) => (reached = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { gate: { reached, open: opened }, halfway, open };
}

/**
 * A model that streams, on real timers, a text and one `write_file` call whose arguments are
 * `argumentsText` in 1 KB deltas 2 ms apart, pausing at `gate()` once `pauseAt` characters have
 * streamed; its next reply is "Done.".
 */
export function gatedArgumentsModel(argumentsText: string, pauseAt: number, gate: () => ArgumentsGate): Model {
  let calls = 0;
  return {
    id: "gated-arguments",
    provider: "test",
    api: "test",
    stream: () =>
      new Observable<ModelEvent>((subscriber) => {
        const first = calls++ === 0;
        const draft = new AssistantMessageDraft({ api: "test", provider: "test", model: "gated-arguments", timestamp: 1 });
        const steps: (ModelEvent[] | "gate")[] = [draft.start()];
        const text = draft.openText();
        steps.push([...text.events, ...draft.appendText(text.index, first ? "Writing the file." : "Done."), ...draft.close(text.index)]);
        if (first) {
          const call = draft.openToolCall("call_write", "write_file");
          steps.push(call.events);
          for (let offset = 0; offset < argumentsText.length; offset += 1024) {
            if (offset === pauseAt) steps.push("gate");
            steps.push(draft.appendToolArguments(call.index, argumentsText.slice(offset, offset + 1024)));
          }
          steps.push(draft.close(call.index));
        }
        steps.push(draft.finish(first ? "toolUse" : "stop"));
        let stopped = false;
        void (async () => {
          for (const step of steps) {
            if (step === "gate") {
              const { reached, open } = gate();
              reached();
              await open;
              continue;
            }
            await new Promise((resolve) => setTimeout(resolve, 2));
            if (stopped) return;
            for (const event of step) subscriber.next(event);
          }
          subscriber.complete();
        })();
        return () => void (stopped = true);
      }),
  };
}

/** The tool a `gatedArgumentsModel` calls: it says what it would have written. */
export const writeFileTool = defineTool({
  name: "write_file",
  description: "Writes a file",
  parameters: Type.Object({ path: Type.String(), content: Type.String() }),
  execute: async (_id, { path, content }) => ({ content: [{ type: "text", text: `wrote ${content.length} characters to ${path}` }], details: {} }),
});
