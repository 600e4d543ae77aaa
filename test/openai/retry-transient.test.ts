import { APIError, AuthenticationError, InternalServerError, RateLimitError } from "openai";
import { defer, timer, type Observable } from "rxjs";
import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import { RequestAbortedError, RetriesExhaustedError, StreamInterruptedError } from "../../src/openai/provider-errors.js";
import { retryTransient } from "../../src/openai/retry-transient.js";

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toStrictEqual(expected));
}

const serverError = new InternalServerError(500, { message: "boom" }, undefined, new Headers());
const rateLimit = (headers: Record<string, string>) => new RateLimitError(429, { message: "slow down" }, undefined, new Headers(headers));
const unauthorized = new AuthenticationError(401, { message: "bad key" }, undefined, new Headers());

/** Each subscription gets the next cold source: one per attempt. */
function attempts<T>(sources: Observable<T>[]): Observable<T> {
  let attempt = 0;
  return defer(() => sources[Math.min(attempt++, sources.length - 1)]!);
}

describe("retryTransient", () => {
  it("retries transient errors with exponential backoff and jitter", () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold("-#", undefined, serverError);
      const second = cold("-#", undefined, serverError);
      const third = cold("-a-b|");
      // random 0 -> factor 0.5: waits 50 and 100 on a base of 100.
      const result = attempts([first, second, third]).pipe(retryTransient({ baseDelayMs: 100, random: () => 0 }));
      //                 1  + 50 wait + 1 + 100 wait + -a-b|
      expectObservable(result).toBe("- 50ms - 100ms -a-b|");
      expectSubscriptions(first.subscriptions).toBe("^!");
      expectSubscriptions(second.subscriptions).toBe("- 50ms ^!");
      expectSubscriptions(third.subscriptions).toBe("- 50ms - 100ms ^---!");
    });
  });

  it("waits what Retry-After says (seconds) and retry-after-ms (milliseconds)", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const seconds = attempts([cold("#", undefined, rateLimit({ "retry-after": "2" })), cold("a|")]);
      expectObservable(seconds.pipe(retryTransient({ random: () => 0.99 }))).toBe("2000ms a|");
      const milliseconds = attempts([cold("#", undefined, rateLimit({ "retry-after-ms": "125", "retry-after": "2" })), cold("a|")]);
      expectObservable(milliseconds.pipe(retryTransient())).toBe("125ms a|");
    });
  });

  it("waits until an HTTP-date Retry-After", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // Virtual time starts at 0, i.e. 1970-01-01T00:00:00Z.
      const source = attempts([cold("#", undefined, rateLimit({ "retry-after": "Thu, 01 Jan 1970 00:00:03 GMT" })), cold("a|")]);
      expectObservable(source.pipe(retryTransient())).toBe("3000ms a|");
    });
  });

  it("gives up after maxRetries with RetriesExhaustedError", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold("#", undefined, serverError);
      const result = source.pipe(retryTransient({ maxRetries: 2, baseDelayMs: 10, random: () => 0 }));
      expectObservable(result).toBe("15ms #", undefined, new RetriesExhaustedError(3, serverError));
    });
    expect(new RetriesExhaustedError(3, serverError).message).toBe("500 boom (gave up after 3 attempts)");
  });

  it("caps the backoff at maxDelayMs", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = attempts([cold("#", undefined, serverError), cold("#", undefined, serverError), cold("#", undefined, serverError), cold("a|")]);
      const result = source.pipe(retryTransient({ maxRetries: 3, baseDelayMs: 100, maxDelayMs: 150, random: () => 0.999999 }));
      // ~100, then min(150, 200), then min(150, 400).
      expectObservable(result).toBe("400ms a|");
    });
  });

  it("never retries 4xx other than 408/409/429, nor aborts", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("-#", undefined, unauthorized).pipe(retryTransient())).toBe("-#", undefined, unauthorized);
      const aborted = new RequestAbortedError();
      expectObservable(cold("-#", undefined, aborted).pipe(retryTransient())).toBe("-#", undefined, aborted);
      const midStream = new APIError(undefined, { message: "in-stream error" }, undefined, undefined);
      expectObservable(cold("-#", undefined, midStream).pipe(retryTransient())).toBe("-#", undefined, midStream);
    });
  });

  it("retries 408 and 409 and a dropped connection before the first value", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const timeout = new APIError(408, { message: "timeout" }, undefined, new Headers());
      const conflict = new APIError(409, { message: "conflict" }, undefined, new Headers());
      const dropped = new StreamInterruptedError(0);
      const source = attempts([cold("#", undefined, timeout), cold("#", undefined, conflict), cold("#", undefined, dropped), cold("a|")]);
      expectObservable(source.pipe(retryTransient({ maxRetries: 3, baseDelayMs: 10, random: () => 0 }))).toBe("35ms a|");
    });
  });

  it("never retries once a value went downstream", () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-#", undefined, serverError);
      expectObservable(source.pipe(retryTransient())).toBe("-a-#", undefined, serverError);
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
  });

  it("an abort during the wait ends it with RequestAbortedError", () => {
    const controller = new AbortController();
    newScheduler().run(({ cold, expectObservable }) => {
      const source = attempts([cold("#", undefined, serverError), cold("a|")]);
      const result = source.pipe(retryTransient({ baseDelayMs: 1000, random: () => 0, signal: controller.signal }));
      timer(500).subscribe(() => controller.abort());
      expectObservable(result).toBe("500ms #", undefined, new RequestAbortedError());
    });
  });
});
