import { ModelChoiceError, type ModelChoice } from "./model-from-environment.js";

export interface PiAiChoiceOptions {
  /** A pi-ai provider, e.g. `anthropic`, `google`, `groq`, `openrouter`. */
  provider: string;
  /** A model id of that provider, e.g. `claude-sonnet-4-5`. */
  modelId: string | undefined;
  /** Sends the requests here instead (a proxy, a gateway, a local server). */
  baseUrl?: string;
}

/** The key variables of the common providers, only to say which one is missing. */
const keyVariables: Record<string, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  google: "GEMINI_API_KEY",
  openai: "OPENAI_API_KEY",
  groq: "GROQ_API_KEY",
  xai: "XAI_API_KEY",
  mistral: "MISTRAL_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  deepseek: "DEEPSEEK_API_KEY",
  cerebras: "CEREBRAS_API_KEY",
};

/**
 * The CLI's model for `--provider <name> --model <id>`: a pi-ai model, with the API key from the
 * provider's usual variable (pi-ai's `getEnvApiKey`: `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, ...).
 *
 * pi-ai is an optional peer, so it is imported only here, when asked for. Contract: rejects with
 * a `ModelChoiceError` saying what to fix for a missing package, an unknown provider or model,
 * or a missing key.
 * @example await piAiModelChoice({ provider: "anthropic", modelId: "claude-sonnet-4-5" })
 */
export async function piAiModelChoice(options: PiAiChoiceOptions): Promise<ModelChoice> {
  const piAi = await import("@mariozechner/pi-ai").catch(() => {
    throw new ModelChoiceError("--provider needs the optional package @mariozechner/pi-ai: npm install @mariozechner/pi-ai");
  });
  const { fromPiAi } = await import("../pi-ai/index.js");
  const { provider, modelId } = options;
  const providers: string[] = piAi.getProviders();
  if (!providers.includes(provider)) {
    throw new ModelChoiceError(`Unknown provider "${provider}". pi-ai knows: ${providers.join(", ")}.`);
  }
  const models = piAi.getModels(provider as Parameters<typeof piAi.getModels>[0]);
  const known = `${models.slice(0, 8).map((model) => model.id).join(", ")}${models.length > 8 ? `, … (${models.length} in all)` : ""}`;
  if (modelId === undefined) throw new ModelChoiceError(`--provider ${provider} needs --model <id>, e.g. one of: ${known}.`);
  const model = models.find((candidate) => candidate.id === modelId);
  if (model === undefined) throw new ModelChoiceError(`Unknown model "${modelId}" for ${provider}. Known: ${known}.`);
  const apiKey = piAi.getEnvApiKey(provider);
  if (apiKey === undefined) {
    const variable = keyVariables[provider];
    throw new ModelChoiceError(`No API key for ${provider}: set ${variable ?? "the provider's API key variable"} in the environment.`);
  }
  const where = options.baseUrl === undefined ? "" : ` at ${options.baseUrl}`;
  return {
    model: fromPiAi(model, { apiKey, ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }) }),
    description: `${model.name} (${provider}/${model.id}) via pi-ai${where}.`,
    isDemo: false,
  };
}
