import type { ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import type { ImageContent, TextContent } from "../types.js";
import { nestsDeeperThan, tooDeepText } from "../util/json-depth.js";

/**
 * An MCP content block as rxagent result content. Text and images map one to one; what rxagent
 * has no type for becomes text that tells the model what arrived: audio, a resource link, an
 * embedded resource (its text, or an image when the blob is one), anything newer as JSON.
 */
export function toResultContent(block: ContentBlock): TextContent | ImageContent {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", data: block.data, mimeType: block.mimeType };
    case "audio":
      return { type: "text", text: `[audio: ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]` };
    case "resource_link":
      return {
        type: "text",
        text: `[resource link: ${block.name} <${block.uri}>${block.mimeType ? ` (${block.mimeType})` : ""}${block.description ? `: ${block.description}` : ""}]`,
      };
    case "resource": {
      const { resource } = block;
      if ("text" in resource && typeof resource.text === "string") {
        return { type: "text", text: `[resource <${resource.uri}>${resource.mimeType ? ` (${resource.mimeType})` : ""}]\n${resource.text}` };
      }
      const blob = (resource as { blob?: string }).blob ?? "";
      if (resource.mimeType?.startsWith("image/")) return { type: "image", data: blob, mimeType: resource.mimeType };
      return { type: "text", text: `[resource <${resource.uri}>${resource.mimeType ? ` (${resource.mimeType})` : ""}: ${base64Bytes(blob)} bytes, not shown]` };
    }
    default:
      // Written out as JSON only when it cannot overflow the stack (a crafted server, issue 27).
      return { type: "text", text: nestsDeeperThan(block) ? `[content of type ${String((block as { type?: unknown }).type)} whose values ${tooDeepText()}, not shown]` : JSON.stringify(block) };
  }
}

/** Decoded size of base64 text, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}
