import type { Cassette, CassetteMessage } from "../testing/cassette.js";

/** Something the person typed during a recorded session, found in the cassette's requests. */
export interface ReplayInput {
  /** `prompt` starts a run; `steer` goes to the run under way; `reset` clears the conversation first. */
  kind: "prompt" | "steer" | "reset";
  text: string;
  /** The index of the model call that first saw it. */
  beforeCall: number;
}

/**
 * The lines to type again to replay a recorded chat: each call's user messages that the
 * previous call had not seen. They steer when the previous reply asked for tools (the run went
 * on), and start a run otherwise; a transcript that stops growing from the previous one means
 * the conversation was reset. A follow-up queued with /later replays as a new prompt: the
 * model saw the same transcript either way.
 */
export function replayInputs(cassette: Cassette): ReplayInput[] {
  const inputs: ReplayInput[] = [];
  let previous: readonly CassetteMessage[] | undefined;
  cassette.calls.forEach((call, beforeCall) => {
    const messages = call.request.messages;
    const continues = previous !== undefined && startsWith(messages, previous);
    if (previous !== undefined && !continues) inputs.push({ kind: "reset", text: "", beforeCall });
    const added = continues && previous ? messages.slice(previous.length) : messages;
    const reply = added[0]?.role === "assistant" ? added[0] : undefined;
    let runGoesOn = continues && reply?.stopReason === "toolUse";
    for (const message of added) {
      if (message.role !== "user") continue;
      inputs.push({ kind: runGoesOn ? "steer" : "prompt", text: textOf(message.content), beforeCall });
      runGoesOn = true;
    }
    previous = messages;
  });
  return inputs;
}

function startsWith(messages: readonly CassetteMessage[], prefix: readonly CassetteMessage[]): boolean {
  return prefix.length <= messages.length && prefix.every((message, index) => JSON.stringify(message) === JSON.stringify(messages[index]));
}

function textOf(content: Extract<CassetteMessage, { role: "user" }>["content"]): string {
  return typeof content === "string" ? content : content.map((block) => (block.type === "text" ? block.text : "")).join("");
}
