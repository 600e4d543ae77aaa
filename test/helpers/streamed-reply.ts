import fc from "fast-check";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import type { AgentEvent, AssistantMessage, ModelEvent } from "../../src/types.js";

/** One to three tool calls, each a JSON object's text cut anywhere into fragments. */
export const streamedCallsArbitrary = fc.array(
  fc
    .tuple(
      fc.tuple(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }), fc.boolean()).map(([value, spaced]) => JSON.stringify(value, undefined, spaced ? 1 : undefined)),
      fc.array(fc.nat(), { maxLength: 8 }),
    )
    .map(([text, seeds]) => ({ text, cuts: seeds.map((seed) => seed % (text.length + 1)) })),
  { minLength: 1, maxLength: 3 },
);

/** The agent events of one reply: a text, then tool calls each streamed through the draft in the given fragments. */
export function streamedReply(calls: { text: string; cuts: number[] }[]): AgentEvent[] {
  const draft = new AssistantMessageDraft({ api: "a", provider: "p", model: "m", timestamp: 1 });
  const modelEvents: ModelEvent[] = [...draft.start()];
  const opened = draft.openText();
  modelEvents.push(...opened.events, ...draft.appendText(opened.index, "Writing it."), ...draft.close(opened.index));
  calls.forEach(({ text, cuts }, call) => {
    const { index, events } = draft.openToolCall(`c${call}`, "f");
    modelEvents.push(...events);
    let from = 0;
    for (const cut of [...cuts, text.length].sort((left, right) => left - right)) {
      modelEvents.push(...draft.appendToolArguments(index, text.slice(from, cut)));
      from = Math.max(from, cut);
    }
    modelEvents.push(...draft.close(index));
  });
  const done = draft.finish("toolUse").at(-1);
  if (done?.type !== "done") throw new Error("expected done");
  return [
    ...modelEvents.map((event): AgentEvent =>
      event.type === "start" ? { type: "message_start", message: event.partial } : { type: "message_update", message: (event as { partial: AssistantMessage }).partial, assistantMessageEvent: event },
    ),
    { type: "message_end", message: done.message },
  ];
}
