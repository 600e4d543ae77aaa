/**
 * Whatever a model sends (test/reliability/arbitrary-model.ts), the run's UI message chunks are
 * each valid by the AI SDK's own schema, and its reader (`readUIMessageStream`, what useChat runs)
 * reads them all with no error but the run's own error chunks (property-based).
 */
import { Type } from "@sinclair/typebox";
import { readUIMessageStream, type UIMessageChunk, uiMessageChunkSchema } from "ai";
import fc from "fast-check";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { toUIMessageChunks } from "../../src/ai-sdk/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { arbitraryModel, reply } from "../reliability/arbitrary-model.js";
import { userMessage } from "../testing/fixtures.js";

const tool = defineTool({ name: "work", description: "Work.", parameters: Type.Object({ n: Type.Number() }), execute: (_toolCallId, args) => textResult(String(args.n)) });

/** What the AI SDK's reader reports while reading `chunks`, other than the error chunks among them. */
async function readerErrors(chunks: UIMessageChunk[]): Promise<string[]> {
  const told = new Set(chunks.flatMap((chunk) => (chunk.type === "error" ? [chunk.errorText] : [])));
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const errors: unknown[] = [];
  try {
    for await (const message of readUIMessageStream({ stream, onError: (error) => errors.push(error) })) expect(message.role).toBe("assistant");
  } catch (error) {
    errors.push(error);
  }
  return errors.map((error) => (error instanceof Error ? error.message : String(error))).filter((message) => !told.has(message));
}

describe("a model that sends arbitrary events, read by the AI SDK (property-based)", () => {
  it("gives chunks the AI SDK's schema accepts and its reader reads whole", async () => {
    const schema = uiMessageChunkSchema();
    await fc.assert(
      fc.asyncProperty(fc.array(reply, { minLength: 1, maxLength: 4 }), async (replies) => {
        const events$ = agentLoop([userMessage("go")], { systemPrompt: "", messages: [], tools: [tool] }, { model: arbitraryModel(replies), maxTurns: 8 });
        const chunks = await lastValueFrom(events$.pipe(toUIMessageChunks(), toArray()));
        for (const chunk of chunks) expect({ chunk, valid: (await schema.validate!(chunk)).success }).toStrictEqual({ chunk, valid: true });
        expect(await readerErrors(chunks)).toStrictEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
