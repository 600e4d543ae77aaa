import type { ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { toResultContent } from "../../src/mcp/index.js";

describe("toResultContent", () => {
  it("keeps text and images, describes audio, links and resources, and quotes unknown blocks as JSON", () => {
    const blocks = [
      { type: "text", text: "hi" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "audio", data: "AAAAAA==", mimeType: "audio/wav" },
      { type: "resource_link", uri: "file:///a.txt", name: "a.txt" },
      { type: "resource", resource: { uri: "file:///b.md", mimeType: "text/markdown", text: "# B" } },
      { type: "resource", resource: { uri: "file:///c.bin", blob: "AAE=" } },
      { type: "hologram", data: 1 },
    ] as unknown as ContentBlock[];
    expect(blocks.map(toResultContent)).toStrictEqual([
      { type: "text", text: "hi" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "text", text: "[audio: audio/wav, 4 bytes, not shown]" },
      { type: "text", text: "[resource link: a.txt <file:///a.txt>]" },
      { type: "text", text: "[resource <file:///b.md> (text/markdown)]\n# B" },
      { type: "text", text: "[resource <file:///c.bin>: 2 bytes, not shown]" },
      { type: "text", text: '{"type":"hologram","data":1}' },
    ]);
  });

  it("does not write out an unknown block nested too deep (JSON.stringify would overflow): it says so", () => {
    const deep = JSON.parse(`{"type": "hologram", "data": ${"[".repeat(6000)}${"]".repeat(6000)}}`) as ContentBlock;
    expect(toResultContent(deep)).toStrictEqual({ type: "text", text: "[content of type hologram whose values nest deeper than 128 levels, not shown]" });
  });
});
