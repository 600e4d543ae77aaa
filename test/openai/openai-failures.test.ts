import { asyncScheduler, lastValueFrom, type SchedulerLike, type Subscription, toArray, VirtualTimeScheduler } from "rxjs";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { openaiChat, openaiResponses } from "../../src/openai/index.js";
import type { ModelEvent } from "../../src/types/model.js";
import { assertModelEventGrammar, collectModelEvents, finalMessage } from "../helpers/model-event-grammar.js";
import { loadFixture } from "../helpers/openai-fixtures.js";
import { helloContext } from "../helpers/run-fixture.js";
import type { ReplayServer, ReplayStep } from "../helpers/sse-replay-server.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";
import { revokedProxy } from "../helpers/unreadable-values.js";

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(steps: ReplayStep[]): Promise<ReplayServer> {
  server = await startReplayServer(steps);
  return server;
}

const rateLimited = (headers: Record<string, string>): ReplayStep => ({
  kind: "http-error",
  status: 429,
  headers,
  body: { error: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" } },
});
const serverError: ReplayStep = { kind: "http-error", status: 500, body: { error: { message: "The server had an error", type: "server_error" } } };
const textFixture: ReplayStep = { kind: "fixture", fixture: loadFixture("chat-text-usage-2") };

/**
 * Waits on a scheduler we drive by hand: flushes whenever a retry timer is due, so the test
 * observes the exact delays without waiting for them.
 */
function manualScheduler(): { scheduler: VirtualTimeScheduler; waits: number[]; drive: () => () => void } {
  const scheduler = new VirtualTimeScheduler();
  const waits: number[] = [];
  const drive = (): (() => void) => {
    const interval = setInterval(() => {
      const pending = (scheduler as unknown as { actions: { delay: number }[] }).actions;
      if (pending.length === 0) return;
      const before = scheduler.now();
      scheduler.flush();
      waits.push(scheduler.now() - before);
    }, 5);
    return () => clearInterval(interval);
  };
  return { scheduler, waits, drive };
}

describe("openaiChat HTTP failures", () => {
  it("retries a 429 after the Retry-After delay, then streams the answer", async () => {
    const replay = await serve([rateLimited({ "retry-after": "3" }), textFixture]);
    const { scheduler, waits, drive } = manualScheduler();
    const stop = drive();
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k", scheduler, random: () => 0 });
    const { events, copies } = await collectModelEvents(model.stream(helloContext, { signal: new AbortController().signal }));
    stop();
    assertModelEventGrammar(events, copies);
    expect(waits).toStrictEqual([3000]);
    expect(replay.requests).toHaveLength(2);
    expect(finalMessage(events)).toMatchObject({ stopReason: "stop", usage: { input: 14, output: 30 } });
  });

  it("honours retry-after-ms over Retry-After", async () => {
    const replay = await serve([rateLimited({ "retry-after-ms": "1250", "retry-after": "9" }), textFixture]);
    const { scheduler, waits, drive } = manualScheduler();
    const stop = drive();
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k", scheduler });
    const events = await lastValueFrom(model.stream(helloContext, { signal: new AbortController().signal }).pipe(toArray()));
    stop();
    expect(waits).toStrictEqual([1250]);
    expect(events[events.length - 1]?.type).toBe("done");
  });

  it("gives up on a 500 after maxRetries, with exponential backoff and a readable message", async () => {
    const replay = await serve([serverError, serverError, serverError]);
    const { scheduler, waits, drive } = manualScheduler();
    const stop = drive();
    // random 0.5 gives a jitter factor of 0.75.
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k", scheduler, random: () => 0.5, retryBaseDelayMs: 1000 });
    const { events, copies } = await collectModelEvents(model.stream(helloContext, { signal: new AbortController().signal }));
    stop();
    assertModelEventGrammar(events, copies);
    expect(replay.requests).toHaveLength(3);
    expect(waits).toStrictEqual([750, 1500]);
    expect(events.map((event) => event.type)).toStrictEqual(["start", "error"]);
    expect(finalMessage(events)).toMatchObject({
      stopReason: "error",
      errorMessage: "500 The server had an error (gave up after 3 attempts)",
      content: [],
    });
  });

  it("retries once over, not twice: a client of one's own with SDK retries still sends maxRetries + 1 requests", async () => {
    const replay = await serve([serverError, serverError, serverError, serverError, serverError, serverError]);
    const { scheduler, drive } = manualScheduler();
    const stop = drive();
    // The SDK's own retries (5 here) would multiply ours; the provider turns them off per request.
    const client = new OpenAI({ baseURL: replay.baseURL, apiKey: "k", maxRetries: 5 });
    const model = openaiChat({ model: "test-model", client, scheduler, random: () => 0 });
    const events = await lastValueFrom(model.stream(helloContext, { signal: new AbortController().signal }).pipe(toArray()));
    stop();
    expect(replay.requests).toHaveLength(3);
    expect(finalMessage(events)).toMatchObject({ errorMessage: "500 The server had an error (gave up after 3 attempts)" });
  });

  it("does not retry a 401", async () => {
    const replay = await serve([
      { kind: "http-error", status: 401, body: { error: { message: "Incorrect API key provided: sk-test", type: "invalid_request_error", code: "invalid_api_key" } } },
      textFixture,
    ]);
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "sk-test" });
    const events = await lastValueFrom(model.stream(helloContext, { signal: new AbortController().signal }).pipe(toArray()));
    expect(replay.requests).toHaveLength(1);
    expect(replay.requests[0]?.headers.authorization).toBe("Bearer sk-test");
    expect(events.map((event) => event.type)).toStrictEqual(["start", "error"]);
    // The key the server quotes is blanked (test/openai/provider-error-secrets.test.ts).
    expect(finalMessage(events)).toMatchObject({ stopReason: "error", errorMessage: "401 Incorrect API key provided: [redacted]" });
  });

  it("does not retry a 404 (unknown model)", async () => {
    const replay = await serve([
      { kind: "http-error", status: 404, body: { error: { message: "The model `nope` does not exist", code: "model_not_found" } } },
    ]);
    const model = openaiChat({ model: "nope", baseURL: replay.baseURL, apiKey: "k" });
    const events = await lastValueFrom(model.stream(helloContext, { signal: new AbortController().signal }).pipe(toArray()));
    expect(replay.requests).toHaveLength(1);
    expect(finalMessage(events).errorMessage).toBe("404 The model `nope` does not exist");
  });

  it("reports a refused connection after retrying it", async () => {
    const replay = await serve([]);
    const baseURL = replay.baseURL;
    await replay.close();
    server = undefined;
    const model = openaiChat({ model: "test-model", baseURL, apiKey: "k", maxRetries: 1, retryBaseDelayMs: 1, random: () => 0 });
    const events = await lastValueFrom(model.stream(helloContext, { signal: new AbortController().signal }).pipe(toArray()));
    const message = finalMessage(events);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/^Connection error: fetch failed: .*ECONNREFUSED.* \(gave up after 2 attempts\)$/);
  });

  it("ends with an error event when the connection drops mid-stream, and does not retry", async () => {
    const replay = await serve([{ kind: "fixture", fixture: loadFixture("chat-text-usage-1"), cutAfter: 12 }, textFixture]);
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k" });
    const { events, copies } = await collectModelEvents(model.stream(helloContext, { signal: new AbortController().signal }));
    assertModelEventGrammar(events, copies);
    expect(replay.requests).toHaveLength(1);
    const message = finalMessage(events);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/^Connection closed mid-stream after 12 chunks \(terminated/);
    expect(events.filter((event) => event.type === "text_delta")).toHaveLength(11);
    expect(message.content).toStrictEqual([{ type: "text", text: expect.stringMatching(/^\*\*Holiday Name:\*\* Harmony Day/) }]);
  });

  it("reports a stream that ends without a finish reason", async () => {
    const replay = await serve([{ kind: "fixture", fixture: { ...loadFixture("chat-text-usage-2"), chunks: loadFixture("chat-text-usage-2").chunks.slice(0, 5) } }]);
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k" });
    const events = await lastValueFrom(model.stream(helloContext, { signal: new AbortController().signal }).pipe(toArray()));
    expect(finalMessage(events)).toMatchObject({
      stopReason: "error",
      errorMessage: "Connection closed mid-stream after 5 chunks (the stream ended without a finish reason)",
    });
  });

  it("aborts mid-stream: aborted error event, and the server sees the request closed", async () => {
    const replay = await serve([{ kind: "fixture", fixture: loadFixture("chat-text-usage-1"), holdAfter: 6 }]);
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k" });
    const controller = new AbortController();
    const events: ModelEvent[] = [];
    const finished = new Promise<void>((resolve) =>
      model.stream(helloContext, { signal: controller.signal }).subscribe({
        next: (event) => {
          events.push(event);
          if (event.type === "text_delta" && events.filter((seen) => seen.type === "text_delta").length === 5) controller.abort();
        },
        complete: resolve,
      }),
    );
    await finished;
    await replay.requests[0]?.closedByClient;
    assertModelEventGrammar(events);
    expect(events[events.length - 1]).toMatchObject({ type: "error", reason: "aborted" });
    expect(finalMessage(events)).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
  });

  it("an already aborted signal sends no request", async () => {
    const replay = await serve([textFixture]);
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k" });
    const events = await lastValueFrom(model.stream(helloContext, { signal: AbortSignal.abort() }).pipe(toArray()));
    expect(events.map((event) => event.type)).toStrictEqual(["start", "error"]);
    expect(finalMessage(events)).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
    expect(replay.requests).toHaveLength(0);
  });

  it("abort during a retry wait ends at once with aborted", async () => {
    const replay = await serve([rateLimited({ "retry-after": "30" }), textFixture]);
    // The real clock, watched: the abort comes once the 30 s wait is scheduled, not after a guess.
    let waitScheduled = (_delay: number): void => {};
    const waiting = new Promise<number>((resolve) => (waitScheduled = resolve));
    const schedule = asyncScheduler.schedule.bind(asyncScheduler) as (work: unknown, delay?: number, state?: unknown) => Subscription;
    const scheduler: SchedulerLike = {
      now: () => asyncScheduler.now(),
      schedule: ((work: unknown, delay?: number, state?: unknown) => {
        if (delay !== undefined && delay > 0) waitScheduled(delay);
        return schedule(work, delay, state);
      }) as SchedulerLike["schedule"],
    };
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k", scheduler });
    const controller = new AbortController();
    const result = lastValueFrom(model.stream(helloContext, { signal: controller.signal }).pipe(toArray()));
    expect(await waiting).toBe(30_000);
    controller.abort();
    // "At once": the 30 s wait is far longer than the test's timeout.
    const events = await result;
    expect(finalMessage(events)).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
    expect(replay.requests).toHaveLength(1);
  });

  it("unsubscribing mid-stream closes the HTTP request", async () => {
    const replay = await serve([{ kind: "fixture", fixture: loadFixture("chat-text-usage-1"), holdAfter: 4 }]);
    const model = openaiChat({ model: "test-model", baseURL: replay.baseURL, apiKey: "k" });
    const events: ModelEvent[] = [];
    const subscription = model.stream(helloContext, { signal: new AbortController().signal }).subscribe((event) => events.push(event));
    while (replay.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await replay.requests[0]?.framesSent;
    // The 4 frames: a role chunk, then 3 content deltas.
    while (events.length < 5) await new Promise((resolve) => setTimeout(resolve, 5));
    subscription.unsubscribe();
    await replay.requests[0]?.closedByClient;
    expect(events.map((event) => event.type)).toStrictEqual(["start", "text_start", "text_delta", "text_delta", "text_delta"]);
  });
});

describe("openaiResponses HTTP failures", () => {
  it("a connection cut mid-stream is an error event", async () => {
    const replay = await serve([{ kind: "fixture", fixture: loadFixture("responses-reasoning-summary"), cutAfter: 40 }]);
    const model = openaiResponses({ model: "test-model", baseURL: replay.baseURL, apiKey: "k" });
    const { events, copies } = await collectModelEvents(model.stream(helloContext, { signal: new AbortController().signal }));
    assertModelEventGrammar(events, copies);
    expect(finalMessage(events)).toMatchObject({ stopReason: "error", errorMessage: expect.stringMatching(/^Connection closed mid-stream after 40 chunks/) });
  });

  it("retries a 503 then streams", async () => {
    const replay = await serve([
      { kind: "http-error", status: 503, body: { error: { message: "overloaded" } } },
      { kind: "fixture", fixture: loadFixture("responses-text-1") },
    ]);
    const model = openaiResponses({ model: "test-model", baseURL: replay.baseURL, apiKey: "k", retryBaseDelayMs: 1 });
    const events = await lastValueFrom(model.stream(helloContext, { signal: new AbortController().signal }).pipe(toArray()));
    expect(replay.requests).toHaveLength(2);
    expect(finalMessage(events)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "2 + 2 equals 4." }] });
  });
});

// A client of one's own (or a custom fetch) may fail with a value that throws as it is read.
// Telling what kind of failure it was threw inside the request Promise's handler: an unhandled
// rejection, which ended the process (exit code 1 in a plain Node script).
describe("a failure that cannot be read", () => {
  it("ends the stream with an error event saying so, and no rejection is left unhandled", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const client = { chat: { completions: { create: () => Promise.reject(revokedProxy()) } } } as unknown as OpenAI;
      const events = await lastValueFrom(openaiChat({ model: "gpt-4o-mini", client, maxRetries: 0 }).stream(helloContext, { signal: new AbortController().signal }).pipe(toArray()));
      await new Promise((resolve) => setImmediate(resolve));
      expect(events.map((event) => event.type)).toStrictEqual(["start", "error"]);
      expect((events.at(-1) as Extract<ModelEvent, { type: "error" }>).error.errorMessage).toBe("The model call failed: an error that could not be read as text");
      expect(unhandled).toStrictEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
