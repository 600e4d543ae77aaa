import { describe, expect, it } from "vitest";
import { openaiChat, openaiResponses } from "../../src/openai/index.js";
import { fromPiAi } from "../../src/pi-ai/index.js";
import type { AssistantMessage, Model } from "../../src/types.js";
import { assertModelEventGrammar, collectModelEvents, finalMessage } from "../helpers/model-event-grammar.js";
import { loadFixture } from "../helpers/openai-fixtures.js";
import { testPrices } from "../helpers/provider-fixtures.js";
import { helloContext } from "../helpers/run-fixture.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";

/**
 * The parts of a message two providers must agree on: what was said, why it stopped, the token
 * counts. A text signature is opaque provider data: pi-ai wraps the Responses item id in its
 * `TextSignatureV1` JSON (`{"v":1,"id":...}`), rxagent keeps the bare id; both carry the same id.
 */
function essence(message: AssistantMessage) {
  const { cost: _cost, ...tokens } = message.usage;
  const content = message.content.map((block) =>
    block.type === "text" && block.textSignature?.startsWith("{")
      ? { ...block, textSignature: (JSON.parse(block.textSignature) as { id: string }).id }
      : block,
  );
  return { content, stopReason: message.stopReason, errorMessage: message.errorMessage, tokens, responseId: message.responseId };
}

async function finalOf(model: (baseURL: string) => Model, name: string): Promise<AssistantMessage> {
  const server = await startReplayServer([{ kind: "fixture", fixture: loadFixture(name) }]);
  try {
    const { events, copies } = await collectModelEvents(model(server.baseURL).stream(helloContext, { signal: new AbortController().signal }));
    assertModelEventGrammar(events, copies);
    return finalMessage(events);
  } finally {
    await server.close();
  }
}

const piAiModel = (api: "openai-completions" | "openai-responses") => (baseUrl: string) =>
  fromPiAi(
    { id: "test-model", name: "test-model", api, provider: "openai", baseUrl, reasoning: false, input: ["text"], cost: testPrices, contextWindow: 128_000, maxTokens: 4096 },
    { apiKey: "test-key", maxRetries: 0 },
  );

/**
 * The OpenAI recordings through pi-ai's own OpenAI providers, checked against rxagent's own
 * OpenAI provider on the same recording: two independent implementations must agree.
 */
describe.each([
  ["chat-tool-call-single-1", "openai-completions"],
  ["chat-parallel-tool-calls-1", "openai-completions"],
  ["chat-text-usage-2", "openai-completions"],
  ["responses-function-call-1", "openai-responses"],
  ["responses-text-1", "openai-responses"],
] as const)("fromPiAi replaying OpenAI %s (%s)", (name, api) => {
  it("delivers the same message as rxagent's own OpenAI provider", async () => {
    const own = await finalOf(
      (baseURL) => (api === "openai-responses" ? openaiResponses : openaiChat)({ model: "test-model", baseURL, apiKey: "test-key", maxRetries: 0 }),
      name,
    );
    const viaPiAi = await finalOf(piAiModel(api), name);
    expect(essence(viaPiAi)).toStrictEqual(essence(own));
    expect([viaPiAi.api, viaPiAi.provider, viaPiAi.model]).toStrictEqual([api, "openai", "test-model"]);
  });
});
