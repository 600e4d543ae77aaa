import { asyncScheduler, Observable } from "rxjs";
import { emptyUsage } from "../../src/types/messages.js";
import type { AssistantMessage, Model, ModelEvent, ToolCall } from "../../src/types.js";

/** JSON text of `levels` nested arrays inside an object: `{"items": [[[…]]]}`. */
export function deepArgumentsText(levels: number): string {
  return `{"items": ${"[".repeat(levels)}${"]".repeat(levels)}}`;
}

/**
 * A model as a crafted reply would make it (issue 27): the first call streams a tool call to
 * `toolName` whose arguments nest `levels` deep, as text deltas and as the parsed object a
 * provider hands on; later calls answer "done". Why not `scriptedModel`: it writes its arguments
 * out with `JSON.stringify`, which overflows on these before the loop sees them.
 */
export function deepArgumentsModel(toolName: string, levels: number): Model {
  let calls = 0;
  const model: Model = {
    id: "deep",
    provider: "deep",
    api: "deep",
    stream: () =>
      new Observable<ModelEvent>((subscriber) => {
        const first = calls++ === 0;
        const base: AssistantMessage = { role: "assistant", content: [], api: "deep", provider: "deep", model: "deep", usage: emptyUsage(), stopReason: "stop", timestamp: 0 };
        const events: ModelEvent[] = [{ type: "start", partial: base }];
        if (first) {
          const text = deepArgumentsText(levels);
          const opened: AssistantMessage = { ...base, content: [{ type: "toolCall", id: "call_deep", name: toolName, arguments: {} }] };
          events.push({ type: "toolcall_start", contentIndex: 0, partial: opened });
          const toolCall: ToolCall = { type: "toolCall", id: "call_deep", name: toolName, arguments: JSON.parse(text) as Record<string, unknown> };
          const closed: AssistantMessage = { ...base, content: [toolCall], stopReason: "toolUse" };
          events.push({ type: "toolcall_delta", contentIndex: 0, delta: text, partial: closed });
          events.push({ type: "toolcall_end", contentIndex: 0, toolCall, partial: closed });
          events.push({ type: "done", reason: "toolUse", message: closed });
        } else {
          const answered: AssistantMessage = { ...base, content: [{ type: "text", text: "done" }] };
          events.push({ type: "done", reason: "stop", message: answered });
        }
        // Asynchronous, as a provider is: the events reach the server's subscribers from a timer.
        const scheduled = asyncScheduler.schedule(() => {
          for (const event of events) subscriber.next(event);
          subscriber.complete();
        }, 1);
        return () => scheduled.unsubscribe();
      }),
  };
  return model;
}
