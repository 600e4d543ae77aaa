import { describe, expect, it } from "vitest";
import { withRetry } from "../../src/model/with-retry.js";
import type { ModelEvent } from "../../src/types/model.js";
import { marbles } from "../helpers/marbles.js";
import { modelEvents, modelOfAttempts } from "../helpers/model-events.js";

const { start, text, delta, done, failed, failedAfterText } = modelEvents();
const overloaded = failed("503 overloaded", { transient: true, status: 503 });
const values = { s: start, t: text, d: delta, f: done, e: overloaded };
const live = () => ({ signal: new AbortController().signal });

describe("withRetry", () => {
  it(
    "retries a transient failure with exponential backoff and jitter, holding back the failed attempts' start",
    marbles((m) => {
      const first = m.cold("  s-e", values);
      const second = m.cold(" s-e", values);
      const third = m.cold("  s-t---d-f|", values);
      const model = withRetry(modelOfAttempts([first, second, third]), { initialDelayMs: 100, random: () => 0, scheduler: m.scheduler });
      // 2 frames + 50 wait (factor 0.5) + 2 frames + 100 wait, then the third attempt, its start
      // released with its first content.
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("-- 50ms -- 100ms --(st)d-f|", values);
      m.expect(first).toHaveSubscriptions("      ^-!");
      m.expect(second).toHaveSubscriptions("     -- 50ms ^-!");
      m.expect(third).toHaveSubscriptions("      -- 50ms -- 100ms ^--------!");
    }),
  );

  it(
    "waits what the failure's Retry-After says, not the backoff",
    marbles((m) => {
      const rateLimited = failed("429 Rate limit reached", { transient: true, status: 429, retryAfterMs: 3000 });
      const model = withRetry(modelOfAttempts([m.cold("s-r", { ...values, r: rateLimited }), m.cold("s-(f|)", values)]), {
        initialDelayMs: 1,
        random: () => 0.99,
        scheduler: m.scheduler,
      });
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("-- 3000ms --(sf|)", values);
    }),
  );

  it(
    "reports a Retry-After longer than maxRetryAfterMs at once",
    marbles((m) => {
      const rateLimited = failed("429 Rate limit reached", { transient: true, status: 429, retryAfterMs: 120_000 });
      const model = withRetry(modelOfAttempts([m.cold("s-r", { ...values, r: rateLimited }), m.cold("s-f|", values)]), { scheduler: m.scheduler });
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("--(sr|)", { ...values, r: rateLimited });
    }),
  );

  it(
    "gives up after `retries`, ending with the last failure and the number of attempts",
    marbles((m) => {
      const attempt = m.cold("s-e", values);
      const model = withRetry(modelOfAttempts([attempt]), { retries: 2, initialDelayMs: 10, random: () => 0, scheduler: m.scheduler });
      const gaveUp = { ...overloaded, error: { ...overloaded.error, errorMessage: "503 overloaded (gave up after 3 attempts)" } };
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("-- 5ms -- 10ms --(sg|)", { ...values, g: gaveUp });
    }),
  );

  it(
    "with retries 0, passes the failure through as it was",
    marbles((m) => {
      const model = withRetry(modelOfAttempts([m.cold("s-(e|)", values)]), { retries: 0, scheduler: m.scheduler });
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("--(se|)", values);
    }),
  );

  it(
    "caps the backoff at maxDelayMs",
    marbles((m) => {
      const model = withRetry(modelOfAttempts([m.cold("e", values), m.cold("e", values), m.cold("e", values), m.cold("f|", values)]), {
        retries: 3,
        initialDelayMs: 100,
        maxDelayMs: 150,
        random: () => 0.99,
        scheduler: m.scheduler,
      });
      // factor 0.995: 100 -> 100, 200 -> 150 -> 149, 400 -> 150 -> 149.
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("100ms 149ms 149ms f|", values);
    }),
  );

  it(
    "never retries once content streamed (no duplicate text), nor a failure retryOn rejects",
    marbles((m) => {
      const midStream = failedAfterText("Connection closed mid-stream after 3 chunks");
      const cut = m.cold("s-t---d-(x|)", { ...values, x: midStream });
      const afterContent = modelOfAttempts([cut, m.cold("s-f|", values)]);
      m.expect(withRetry(afterContent, { scheduler: m.scheduler }).stream({ messages: [] }, live())).toBeObservable("--(st)d-(x|)", { ...values, x: midStream });

      const unauthorized = failed("401 Incorrect API key", { transient: false, status: 401 });
      const rejected = modelOfAttempts([m.cold("s-(u|)", { ...values, u: unauthorized }), m.cold("s-f|", values)]);
      m.expect(withRetry(rejected, { scheduler: m.scheduler }).stream({ messages: [] }, live())).toBeObservable("--(su|)", { ...values, u: unauthorized });

      const custom = modelOfAttempts([m.cold("(e|)", values), m.cold("f|", values)]);
      m.expect(withRetry(custom, { retryOn: () => false, scheduler: m.scheduler }).stream({ messages: [] }, live())).toBeObservable("(e|)", values);
    }),
  );

  it(
    "an abort during the wait ends it at once with an aborted error event",
    marbles((m) => {
      const controller = new AbortController();
      const model = withRetry(modelOfAttempts([m.cold("s-e", values), m.cold("s-f|", values)]), { initialDelayMs: 1000, random: () => 0, scheduler: m.scheduler });
      m.scheduler.schedule(() => controller.abort(), 100);
      const aborted: ModelEvent = { type: "error", reason: "aborted", error: { ...overloaded.error, stopReason: "aborted", errorMessage: "Request was aborted" } };
      m.expect(model.stream({ messages: [] }, { signal: controller.signal })).toBeObservable("100ms (sa|)", { ...values, a: aborted });
    }),
  );

  it(
    "puts what the attempts it sent again reported spending on the final message, as retriedUsage",
    marbles((m) => {
      const spent = (input: number) => ({ ...overloaded.error.usage, input, totalTokens: input, cost: { ...overloaded.error.usage.cost, total: input } });
      const billed = (input: number): ModelEvent => ({ ...overloaded, error: { ...overloaded.error, usage: spent(input) } });
      const attempts = [m.cold("s-a", { ...values, a: billed(10) }), m.cold("s-b", { ...values, b: billed(20) }), m.cold("s-(f|)", values)];
      const model = withRetry(modelOfAttempts(attempts), { retries: 2, initialDelayMs: 10, random: () => 0, scheduler: m.scheduler });
      const answered = { ...done, message: { ...done.message, retriedUsage: spent(30) } } as ModelEvent;
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("-- 5ms -- 10ms --(sf|)", { ...values, f: answered });

      // Given up: the last failure keeps its own usage, the earlier attempt's is its retriedUsage.
      const failing = withRetry(modelOfAttempts([m.cold("s-a", { ...values, a: billed(10) }), m.cold("s-b", { ...values, b: billed(20) })]), { retries: 1, initialDelayMs: 10, random: () => 0, scheduler: m.scheduler });
      const last = billed(20) as Extract<ModelEvent, { type: "error" }>;
      const gaveUp = { ...last, error: { ...last.error, retriedUsage: spent(10), errorMessage: "503 overloaded (gave up after 2 attempts)" } };
      m.expect(failing.stream({ messages: [] }, live())).toBeObservable("-- 5ms --(sg|)", { ...values, g: gaveUp });
    }),
  );

  it("reads transient failures from the message when the provider reports no `failure` (pi-ai, cassettes)", async () => {
    const { isTransientFailure } = await import("../../src/model/transient-failure.js");
    const cases = ["429 Too Many Requests", "529 Overloaded", "500 Internal error", "Connection error: ECONNRESET", "socket hang up", "terminated", '{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}'];
    expect(cases.map((message) => isTransientFailure(failed(message)))).toStrictEqual(cases.map(() => true));
    expect(["401 Unauthorized", "400 Bad request", "Model returned invalid JSON"].map((message) => isTransientFailure(failed(message)))).toStrictEqual([false, false, false]);
    expect(isTransientFailure({ ...failed("500"), reason: "aborted" })).toBe(false);
  });

  // Read before the loop checks them: `null` threw out of the model's `next` (an uncaught
  // exception), as did an error message that is no text once the attempts gave up.
  it(
    "passes on what is no event as it came, and gives up on an error whose message and hint are of the wrong kind with a message of its own",
    marbles((m) => {
      const odd: ModelEvent = { ...overloaded, error: { ...overloaded.error, errorMessage: { toString: 1 } as unknown as string }, failure: { transient: true, retryAfterMs: "soon" as unknown as number } };
      const junkFirst = withRetry(modelOfAttempts([m.cold("n-s-e", { ...values, n: null as unknown as ModelEvent })]), { scheduler: m.scheduler });
      m.expect(junkFirst.stream({ messages: [] }, live())).toBeObservable("n-s-e", { ...values, n: null as unknown as ModelEvent });
      const giving = withRetry(modelOfAttempts([m.cold("s-o", { ...values, o: odd })]), { retries: 1, initialDelayMs: 10, random: () => 0, scheduler: m.scheduler });
      const gaveUp = { ...odd, error: { ...odd.error, errorMessage: "Model call failed (gave up after 2 attempts)" } };
      m.expect(giving.stream({ messages: [] }, live())).toBeObservable("-- 5ms --(sg|)", { ...values, g: gaveUp });
    }),
  );

  it("takes a failure as transient only when it says so with true, and reads no message that is not text", async () => {
    const { isTransientFailure } = await import("../../src/model/transient-failure.js");
    expect(isTransientFailure({ ...failed("x"), failure: { transient: "yes" } as unknown as { transient: boolean } })).toBe(false);
    expect(isTransientFailure({ ...failed("x"), error: { ...failed("x").error, errorMessage: { toString: 1 } as unknown as string } })).toBe(false);
  });
});
