/**
 * `rxagent/pi-ai`: every provider of `@mariozechner/pi-ai` (an optional peer dependency: install
 * it to use this entry point) as an rxagent `Model`.
 */
export { fromPiAi } from "./from-pi-ai.js";
export type { PiAiModelOptions } from "./from-pi-ai.js";
export { toPiAiContext } from "./pi-ai-context.js";
