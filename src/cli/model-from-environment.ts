import type { SchedulerLike } from "rxjs";
import { demoModel } from "../demo/demo-model.js";
import type { Model } from "../types.js";
import { importPeer } from "./import-peer.js";

/** The model the CLI will use, and how to announce it. */
export interface ModelChoice {
  model: Model;
  /** One line for the banner, e.g. "gpt-4o-mini via OpenAI Chat Completions". */
  description: string;
  isDemo: boolean;
}

export interface ModelChoiceOptions {
  /** Usually `process.env`: `OPENAI_API_KEY` or `OPENAI_BASE_URL` select the OpenAI provider. */
  environment: Record<string, string | undefined>;
  /** Model name for the OpenAI provider. Default `gpt-4o-mini`. */
  modelName?: string;
  /** Which OpenAI API. Default `chat`. */
  api?: "chat" | "responses";
  /** Use the demo model even when a key is set. */
  forceDemo?: boolean;
  /** The demo model's time between tokens. */
  demoDelay?: number;
  scheduler?: SchedulerLike;
}

export const defaultModelName = "gpt-4o-mini";

/** A model choice that cannot work (a missing key or package, an unknown name); the CLI shows it with the usage hint. */
export class ModelChoiceError extends Error {}

/**
 * Picks the model: the OpenAI provider (any compatible server) when the environment points
 * to one, else the offline demo model, so the first run works with no key at all. The OpenAI
 * provider is loaded only then, so the demo runs without the optional `openai` package.
 * A model asked for by name (`--model gpt-4o`) with neither variable set is a `ModelChoiceError`
 * naming `OPENAI_API_KEY`, `OPENAI_BASE_URL` and `--demo`: answering it with the demo would hide
 * the missing key behind a run that looks like success.
 * @example (await modelFromEnvironment({ environment: process.env })).description
 */
export async function modelFromEnvironment(options: ModelChoiceOptions): Promise<ModelChoice> {
  const apiKey = nonEmpty(options.environment["OPENAI_API_KEY"]);
  const baseURL = nonEmpty(options.environment["OPENAI_BASE_URL"]);
  if (!options.forceDemo && apiKey === undefined && baseURL === undefined && options.modelName !== undefined) {
    throw new ModelChoiceError(
      `--model ${options.modelName} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server such as Ollama) in the environment; --demo uses the offline demo model instead.`,
    );
  }
  if (options.forceDemo || (apiKey === undefined && baseURL === undefined)) {
    const model = demoModel({
      ...(options.demoDelay === undefined ? {} : { delay: options.demoDelay }),
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    });
    return {
      model,
      description: "the offline demo model (no API key needed). For a real model set OPENAI_API_KEY, or OPENAI_BASE_URL for Ollama, vLLM or llama.cpp.",
      isDemo: true,
    };
  }
  const modelName = options.modelName ?? defaultModelName;
  const settings = {
    model: modelName,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(baseURL === undefined ? {} : { baseURL }),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
  };
  const api = options.api ?? "chat";
  const { openaiChat, openaiResponses } = await importPeer(() => import("../openai/index.js"), "openai", "The OpenAI provider (OPENAI_API_KEY or OPENAI_BASE_URL is set)");
  const model = api === "responses" ? openaiResponses(settings) : openaiChat(settings);
  const apiName = api === "responses" ? "OpenAI Responses API" : "OpenAI Chat Completions API";
  return { model, description: `${modelName} via the ${apiName}${baseURL ? ` at ${baseURL}` : ""}.`, isDemo: false };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
