import { last, map, type Observable } from "rxjs";
import { jsonText } from "../util/json-text.js";
import { roleOf } from "../types/messages.js";
import type { AgentMessage, AssistantMessage, Model, ModelEvent } from "../types.js";
import { isCompactionSummary } from "./compacted-messages.js";

/** What `compaction` tells a model summarizer, unless given its own `instructions`. */
export const SUMMARY_INSTRUCTIONS =
  "You summarize the conversation below between a user and an AI agent, so that the agent can go on without it. " +
  "Keep the user's goals and requests, decisions taken, facts and results found (names, numbers, paths, errors), " +
  "what is done and what is left to do. Be brief: plain sentences or short lists, no preamble.";

/**
 * A summarizer that asks `model`: the messages go as one user message of plain text (so a
 * provider that wants a tool's definition beside each tool call is not involved), and the
 * answer's text is the summary. A failed call is an error naming the model's message.
 */
export function summarizeWithModel(model: Model, instructions: string = SUMMARY_INSTRUCTIONS): (messages: readonly AgentMessage[], signal: AbortSignal) => Observable<string> {
  return (messages, signal) =>
    model
      .stream({ systemPrompt: instructions, messages: [{ role: "user", content: conversationText(messages), timestamp: messages.at(-1)?.timestamp ?? 0 }] }, { signal })
      .pipe(
        last((event: ModelEvent) => event.type === "done" || event.type === "error"),
        map((event) => {
          if (event.type === "error") throw new Error(`the summarizing model failed: ${event.error.errorMessage ?? event.reason}`);
          return textOf((event as Extract<ModelEvent, { type: "done" }>).message);
        }),
      );
}

/** The messages as the text a summarizer reads, one labelled paragraph each; other custom messages are left out. */
export function conversationText(messages: readonly AgentMessage[]): string {
  const paragraphs: string[] = [];
  for (const message of messages) {
    const custom: unknown = message;
    if (isCompactionSummary(custom)) {
      paragraphs.push(`[Summary of what came before]\n${custom.summary}`);
      continue;
    }
    const role = roleOf(message);
    if (role === "user") {
      const { content } = message as Extract<AgentMessage, { role: "user" }>;
      paragraphs.push(`[User]\n${typeof content === "string" ? content : partsText(content)}`);
    } else if (role === "assistant") {
      const assistant = message as AssistantMessage;
      const lines = assistant.content.map((part) => (part.type === "text" ? part.text : part.type === "toolCall" ? `(calls ${part.name} ${jsonText(part.arguments)})` : ""));
      paragraphs.push(`[Assistant]\n${lines.filter((line) => line !== "").join("\n")}`);
    } else if (role === "toolResult") {
      const result = message as Extract<AgentMessage, { role: "toolResult" }>;
      paragraphs.push(`[Result of ${result.toolName}${result.isError ? ", an error" : ""}]\n${partsText(result.content)}`);
    }
  }
  return paragraphs.join("\n\n");
}

function partsText(parts: readonly { type: string; text?: string }[]): string {
  return parts.map((part) => (part.type === "text" ? (part.text ?? "") : `[${part.type}]`)).join("\n");
}

function textOf(message: AssistantMessage): string {
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}
