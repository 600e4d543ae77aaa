import type { LlmContext, Message, ToolResultMessage } from "../types.js";
import { detectIntents, type PlannedToolCall } from "./demo-intents.js";

export type { PlannedToolCall } from "./demo-intents.js";

/** What the demo model will say next: optional thinking, text, then tool calls. */
export interface ReplyPlan {
  thinking?: string;
  text: string;
  toolCalls: PlannedToolCall[];
}

/** Told whenever nothing else fits: what the demo is, and how to get a real model. */
export const offlineNotice =
  "I'm rxagent's offline demo model, so I only understand arithmetic (\"what is 12*7\"), the time (\"what time is it\") " +
  "and the files in this folder (\"list files\", \"read README.md\", and once you approve \"write 'hi' to notes.txt\"); " +
  "a sub-agent can do the reading (\"research what README.md says\"). " +
  "For real answers, connect a model: set OPENAI_API_KEY " +
  "(or OPENAI_BASE_URL for Ollama, vLLM or llama.cpp) and start again.";

/**
 * Decides the demo model's next reply from the conversation, as a real model would: new
 * requests become tool calls (several at once when independent), tool results become an
 * answer, and a message that arrived while tools ran (steering) is acknowledged and handled.
 *
 * Pure: the same context always gives the same plan.
 * @example planReply({ messages: [{ role: "user", content: "what is 12*7", timestamp: 0 }], tools }).toolCalls
 * // [{ name: "calculator", arguments: { expression: "12*7" } }]
 */
export function planReply(context: LlmContext): ReplyPlan {
  const { messages } = context;
  let lastAssistant = messages.length - 1;
  while (lastAssistant >= 0 && messages[lastAssistant]?.role !== "assistant") lastAssistant -= 1;
  const since = messages.slice(lastAssistant + 1);
  const results = since.filter((message): message is ToolResultMessage => message.role === "toolResult");
  const userTexts = since.filter((message) => message.role === "user").map(textOf);
  const available = context.tools === undefined ? undefined : new Set(context.tools.map((tool) => tool.name));

  if (userTexts.length === 0) {
    if (results.length > 0) return { text: answerFrom(results), toolCalls: [] };
    return { text: "There is nothing new for me to answer. Ask me something!", toolCalls: [] };
  }
  // A message that arrived after tool calls went out, or next to another: the user interjected.
  const interjection = results.length > 0 || userTexts.length > 1;
  const latest = userTexts[userTexts.length - 1] ?? "";
  const acknowledgement = interjection ? `You said: "${shorten(latest, 80)}" — ` : "";
  const intents = detectIntents(interjection && results.length > 0 ? latest : userTexts.join("\n"));
  const usable = intents.toolCalls.filter((call) => available === undefined || available.has(call.name));
  const soFar = results.length > 0 ? `So far: ${answerFrom(results, { inline: true })}` : "";

  if (interjection && intents.stop && usable.length === 0) {
    return { text: `${acknowledgement}OK, I'll stop here.${soFar ? ` ${soFar}` : ""}`, toolCalls: [] };
  }
  if (usable.length > 0) {
    const reasons = intents.reasons.filter((_reason, index) => usable.includes(intents.toolCalls[index] as PlannedToolCall));
    const parallel = usable.length > 1 ? `\n${usable.length} independent calls: I send them together so they run in parallel.` : "";
    const intro = usable.length > 1 ? "Let me check those at once." : `Let me use the ${usable[0]?.name.replace("_", " ")} tool.`;
    const text = acknowledgement + (soFar ? `${soFar} ` : "") + (interjection && !soFar ? lowerFirst(intro) : intro);
    return { thinking: reasons.join("\n") + parallel, text, toolCalls: usable };
  }
  if (intents.toolCalls.length > 0) {
    const missing = [...new Set(intents.toolCalls.map((call) => call.name))].join(", ");
    return { text: `${acknowledgement}I would need the ${missing} tool for that, but this agent does not have it.`, toolCalls: [] };
  }
  const reply = intents.greeting ? `Hello! ${offlineNotice}` : intents.help ? offlineNotice : `I can't answer "${shorten(latest, 60)}" for real. ${offlineNotice}`;
  return { text: acknowledgement + (soFar ? `${soFar}\n` : "") + reply, toolCalls: [] };
}

/** The answer a set of tool results supports, one finding per result. */
function answerFrom(results: ToolResultMessage[], options: { inline?: boolean } = {}): string {
  const findings = results.map(describeResult);
  if (options.inline || findings.length === 1) return findings.join(" ");
  return `Here is what I found:\n${findings.map((finding) => `- ${finding}`).join("\n")}`;
}

function describeResult(result: ToolResultMessage): string {
  const text = result.content.map((part) => (part.type === "text" ? part.text : "[image]")).join("\n").trim();
  if (result.isError) return `The ${result.toolName} tool refused: ${shorten(text, 200)}`;
  const details = (result.details ?? {}) as Record<string, unknown>;
  switch (result.toolName) {
    case "calculator":
      return `${text}.`;
    case "clock":
      return text;
    case "list_files": {
      const entries = Array.isArray(details["entries"]) ? (details["entries"] as { name: string; kind: string }[]) : [];
      const names = entries.slice(0, 12).map((entry) => (entry.kind === "directory" ? `${entry.name}/` : entry.name));
      const more = entries.length > names.length ? `, and ${entries.length - names.length} more` : "";
      return `${String(details["path"] ?? "The folder")} holds ${entries.length} entries: ${names.join(", ")}${more}.`;
    }
    case "write_file":
      return text;
    case "researcher":
      return `The researcher (a sub-agent) reports: ${shorten(text, 600)}`;
    case "read_file": {
      const head = text.split("\n").slice(0, 3).map((line) => `  > ${shorten(line, 100)}`).join("\n");
      return `${String(details["path"] ?? "The file")} has ${String(details["lines"] ?? "?")} lines (${String(details["bytes"] ?? "?")} bytes). It begins:\n${head}`;
    }
    default:
      return `${result.toolName} said: ${shorten(text, 200)}`;
  }
}

function textOf(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function shorten(text: string, length: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= length ? flat : `${flat.slice(0, length - 1)}…`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
