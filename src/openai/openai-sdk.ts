import type OpenAI from "openai";
import { errorText } from "../util/error-text.js";

/**
 * The `openai` package's client class, imported when a model without a `client` of its own makes
 * its first call, so `import "rxagent/openai"` does not load the SDK. Why: the SDK is 150 of the
 * entry point's modules; a CLI, a serverless function or a test suite that imports the provider
 * but calls no model (or not yet) would load them at every start (`npm run bench:imports`).
 *
 * Contract: rejects with an error that names `npm i openai` when the package cannot be loaded.
 */
export function loadOpenAIClient(): Promise<typeof OpenAI> {
  return import("openai").then(
    (sdk) => sdk.default,
    (error: unknown) => {
      const reason = errorText(error);
      throw new Error(`rxagent/openai could not load the package "openai" (npm i openai): ${reason}`, { cause: error });
    },
  );
}
