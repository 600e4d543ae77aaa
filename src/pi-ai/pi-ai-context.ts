import type { Context, Message as PiAiMessage, Tool as PiAiTool } from "@mariozechner/pi-ai";
import { pairedForModel } from "../model/paired-for-model.js";
import type { LlmContext } from "../types/model.js";

/**
 * rxagent's model context as pi-ai's `Context`: the same system prompt and messages (the shapes
 * are field for field the same), and each tool reduced to what a provider is sent: name,
 * description and JSON Schema parameters. Tool results are paired with their calls first
 * (`pairedForModel`): pi-ai's providers send a result without its call as it is, which the
 * provider refuses.
 *
 * Why the casts: pi-ai types its messages as mutable arrays and its schemas with TypeBox 1.x, our
 * tools with `@sinclair/typebox` 0.34; both are plain JSON Schema objects at run time. The
 * messages are read, not changed: every pi-ai provider converts them into a request body of its own.
 */
export function toPiAiContext(context: LlmContext): Context {
  const piAiContext: Context = { messages: pairedForModel(context.messages) as PiAiMessage[] };
  if (context.systemPrompt !== undefined) piAiContext.systemPrompt = context.systemPrompt;
  if (context.tools !== undefined && context.tools.length > 0) {
    piAiContext.tools = context.tools.map(
      ({ name, description, parameters }) => ({ name, description, parameters }) as unknown as PiAiTool,
    );
  }
  return piAiContext;
}
