import type { LlmContext } from "../types/model.js";
import type { CassetteMessage, CassetteRequest } from "./cassette.js";
import { redactCredentials } from "../util/redact-credentials.js";

export { redactCredentials, redactedText } from "../util/redact-credentials.js";

/**
 * The request as a cassette keeps it: what a provider sends, as plain JSON, credentials blanked.
 * Reads the context during the call, as the `LlmContext` contract asks.
 */
export function cassetteRequestOf(context: LlmContext, secrets: readonly string[] = []): CassetteRequest {
  const request: CassetteRequest = {
    ...(context.systemPrompt === undefined ? {} : { systemPrompt: context.systemPrompt }),
    messages: context.messages.map(cassetteMessageOf),
  };
  if (context.tools !== undefined) {
    request.tools = context.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }
  return redactCredentials(JSON.parse(JSON.stringify(request)) as CassetteRequest, secrets);
}

function cassetteMessageOf(message: LlmContext["messages"][number]): CassetteMessage {
  switch (message.role) {
    case "user":
      return { role: "user", content: message.content };
    case "assistant":
      return { role: "assistant", content: message.content, stopReason: message.stopReason };
    case "toolResult":
      return { role: "toolResult", toolCallId: message.toolCallId, toolName: message.toolName, content: message.content, isError: message.isError };
  }
}

const maxDifferences = 12;

/**
 * How the request sent now differs from the recorded one, one readable line per difference
 * (at most a dozen); empty when they match. Tools are compared by name, so a missing or new
 * tool reads as such rather than as a shifted list.
 */
export function requestDifferences(recorded: CassetteRequest, sent: CassetteRequest): string[] {
  const lines: string[] = [];
  compare(recorded.systemPrompt, sent.systemPrompt, "systemPrompt", lines);
  const count = Math.max(recorded.messages.length, sent.messages.length);
  for (let index = 0; index < count; index++) {
    const path = `messages[${index}]`;
    const recordedMessage = recorded.messages[index];
    const sentMessage = sent.messages[index];
    if (sentMessage === undefined) lines.push(`${path}: recorded ${show(summaryOf(recordedMessage))}, not sent`);
    else if (recordedMessage === undefined) lines.push(`${path}: sent ${show(summaryOf(sentMessage))}, not recorded`);
    else compare(recordedMessage, sentMessage, path, lines);
  }
  const recordedTools = new Map((recorded.tools ?? []).map((tool) => [tool.name, tool]));
  const sentTools = new Map((sent.tools ?? []).map((tool) => [tool.name, tool]));
  for (const [name, tool] of recordedTools) {
    const sentTool = sentTools.get(name);
    if (sentTool === undefined) lines.push(`tools: "${name}" recorded, not sent`);
    else compare(tool, sentTool, `tools["${name}"]`, lines);
  }
  for (const name of sentTools.keys()) if (!recordedTools.has(name)) lines.push(`tools: "${name}" sent, not recorded`);
  return lines.length > maxDifferences ? [...lines.slice(0, maxDifferences), `... and ${lines.length - maxDifferences} more`] : lines;
}

function compare(recorded: unknown, sent: unknown, path: string, lines: string[]): void {
  if (recorded === sent) return;
  const bothObjects = isObject(recorded) && isObject(sent) && Array.isArray(recorded) === Array.isArray(sent);
  if (!bothObjects) {
    lines.push(`${path}: ${typeof recorded === "string" && typeof sent === "string" ? stringDifference(recorded, sent) : `recorded ${show(recorded)}, sent ${show(sent)}`}`);
    return;
  }
  const keys = new Set([...Object.keys(recorded), ...Object.keys(sent)]);
  for (const key of keys) {
    compare(recorded[key], sent[key], Array.isArray(recorded) ? `${path}[${key}]` : `${path}.${key}`, lines);
  }
}

/** Two strings shown around their first difference, so a long prompt does not hide it. */
function stringDifference(recorded: string, sent: string): string {
  let first = 0;
  while (first < recorded.length && recorded[first] === sent[first]) first++;
  const start = Math.max(0, first - 24);
  const excerpt = (text: string) => `${start > 0 ? "…" : ""}${JSON.stringify(text.slice(start, first + 40))}${text.length > first + 40 ? "…" : ""}`;
  return `recorded ${excerpt(recorded)}, sent ${excerpt(sent)}`;
}

function summaryOf(message: CassetteMessage | undefined): unknown {
  if (message === undefined) return undefined;
  const content = message.content;
  const text = typeof content === "string" ? content : content.map((block) => ("text" in block ? block.text : `[${block.type}]`)).join("");
  return `${message.role}: ${text}`;
}

function show(value: unknown): string {
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object";
}
