import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** A recorded stream from `test/fixtures/openai/` (format documented in its README). */
export interface OpenAIFixture {
  source: string;
  api: "chat.completions" | "responses";
  provider: string;
  model: string;
  sse: {
    done_sentinel: boolean | null;
    comment_lines?: number;
    event_names?: (string | null)[];
  };
  chunks: Record<string, unknown>[];
}

const fixtureDirectory = fileURLToPath(new URL("../fixtures/openai/", import.meta.url));

export function loadFixture(name: string): OpenAIFixture {
  return JSON.parse(readFileSync(`${fixtureDirectory}${name}.json`, "utf8")) as OpenAIFixture;
}

/**
 * The SSE frames a server sent for the recording: `event:` lines where the recording had them
 * (every Responses frame names its type), comment lines first, `[DONE]` where it was sent
 * (or for chat recordings whose source kept no framing).
 */
export function fixtureFrames(fixture: OpenAIFixture): string[] {
  const frames: string[] = [];
  for (let count = 0; count < (fixture.sse.comment_lines ?? 0); count++) frames.push(": OPENROUTER PROCESSING\n\n");
  fixture.chunks.forEach((chunk, index) => {
    const recordedName = fixture.sse.event_names?.[index] ?? null;
    const name = fixture.api === "responses" ? (recordedName ?? String(chunk["type"])) : recordedName;
    frames.push(`${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(chunk)}\n\n`);
  });
  const sendDone = fixture.sse.done_sentinel === true || (fixture.api === "chat.completions" && fixture.sse.done_sentinel === null);
  if (sendDone) frames.push("data: [DONE]\n\n");
  return frames;
}
