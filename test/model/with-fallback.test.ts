import { describe, expect, it } from "vitest";
import { from, lastValueFrom, toArray } from "rxjs";
import { withFallback } from "../../src/model/with-fallback.js";
import { withRetry } from "../../src/model/with-retry.js";
import type { ModelEvent } from "../../src/types/model.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { marbles } from "../helpers/marbles.js";
import { modelEvents, modelOfAttempts } from "../helpers/model-events.js";

const primary = modelEvents("primary");
const secondary = modelEvents("secondary");
const down = primary.failed("503 overloaded", { transient: true, status: 503 });
const fallbackFrom = [{ provider: "test", model: "primary", errorMessage: "503 overloaded" }];
const marked = <T extends ModelEvent>(event: T): ModelEvent => {
  if (event.type === "done") return { ...event, message: { ...event.message, fallbackFrom } };
  if (event.type === "error") return { ...event, error: { ...event.error, fallbackFrom } };
  return { ...event, partial: { ...event.partial, fallbackFrom } };
};
const live = () => ({ signal: new AbortController().signal });

describe("withFallback", () => {
  it(
    "hands a call that failed before content to the next model at once; the answer names who answered and who failed",
    marbles((m) => {
      const first = m.cold("  s-(e|)", { s: primary.start, e: down });
      const second = m.cold(" --s-t---d-(f|)", { s: secondary.start, t: secondary.text, d: secondary.delta, f: secondary.done });
      const model = withFallback([modelOfAttempts([first]), modelOfAttempts([second], "secondary")]);
      const expected = { s: marked(secondary.start), t: marked(secondary.text), d: marked(secondary.delta), f: marked(secondary.done) };
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("------(st)d-(f|)", expected);
      m.expect(first).toHaveSubscriptions(" ^-!");
      m.expect(second).toHaveSubscriptions("--^---------!");
    }),
  );

  it(
    "never hands over after content streamed, nor an abort",
    marbles((m) => {
      const cut = primary.failedAfterText("Connection closed mid-stream");
      const first = m.cold("s-t---(x|)", { s: primary.start, t: primary.text, x: cut });
      const second = m.cold("s-(f|)", { s: secondary.start, f: secondary.done });
      const model = withFallback([modelOfAttempts([first]), modelOfAttempts([second], "secondary")]);
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("--(st)(x|)", { s: primary.start, t: primary.text, x: cut });
      m.expect(second).toHaveSubscriptions([]);

      const aborted = { ...primary.failed("Request was aborted"), reason: "aborted" as const };
      const abortedFirst = m.cold("(a|)", { a: aborted });
      const untouched = m.cold("s-(f|)", { s: secondary.start, f: secondary.done });
      const withAbort = withFallback([modelOfAttempts([abortedFirst]), modelOfAttempts([untouched], "secondary")]);
      m.expect(withAbort.stream({ messages: [] }, live())).toBeObservable("(a|)", { a: aborted });
      m.expect(untouched).toHaveSubscriptions([]);
    }),
  );

  it(
    "when every model fails, the last failure ends the stream and lists the others; `on` narrows what hands over",
    marbles((m) => {
      const last = secondary.failed("500 also down");
      const model = withFallback([modelOfAttempts([m.cold("(e|)", { e: down })]), modelOfAttempts([m.cold("(l|)", { l: last })], "secondary")]);
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("(l|)", { l: marked(last) });

      const rejected = primary.failed("401 bad key", { transient: false, status: 401 });
      const onlyTransient = withFallback([modelOfAttempts([m.cold("(r|)", { r: rejected })]), modelOfAttempts([m.cold("(f|)", { f: secondary.done })], "secondary")], {
        on: (event) => event.failure?.transient === true,
      });
      m.expect(onlyTransient.stream({ messages: [] }, live())).toBeObservable("(r|)", { r: rejected });
    }),
  );

  it(
    "a failed call that reported usage keeps it in its fallbackFrom record, counted once however many models failed",
    marbles((m) => {
      const third = modelEvents("third");
      const billed = (events: ReturnType<typeof modelEvents>, input: number): ModelEvent => {
        const failure = events.failed("503 overloaded", { transient: true, status: 503 }) as Extract<ModelEvent, { type: "error" }>;
        return { ...failure, error: { ...failure.error, usage: { ...failure.error.usage, input, totalTokens: input } } };
      };
      const usage = (input: number) => ({ ...primary.done.type === "done" ? primary.done.message.usage : undefined!, input, totalTokens: input });
      const model = withFallback([
        modelOfAttempts([m.cold("(a|)", { a: billed(primary, 7) })]),
        modelOfAttempts([m.cold("(b|)", { b: billed(secondary, 5) })], "secondary"),
        modelOfAttempts([m.cold("(f|)", { f: third.done })], "third"),
      ]);
      const records = [
        { provider: "test", model: "primary", errorMessage: "503 overloaded", usage: usage(7) },
        { provider: "test", model: "secondary", errorMessage: "503 overloaded", usage: usage(5) },
      ];
      const answer = third.done as Extract<ModelEvent, { type: "done" }>;
      m.expect(model.stream({ messages: [] }, live())).toBeObservable("(f|)", { f: { ...answer, message: { ...answer.message, fallbackFrom: records } } });
    }),
  );

  it("composes with withRetry and scripted models: retry the primary, then fall back", async () => {
    const rateLimited = { stopReason: "error", errorMessage: "429 Too Many Requests" } as const;
    const flaky = scriptedModel([rateLimited, rateLimited], { id: "flaky", provider: "a" });
    const steady = scriptedModel(["Hello from the fallback"], { id: "steady", provider: "b" });
    const model = withFallback([withRetry(flaky, { retries: 1, initialDelayMs: 0 }), steady]);
    const events = await lastValueFrom(model.stream({ messages: [] }, live()).pipe(toArray()));
    const last = events[events.length - 1];
    expect(flaky.calls).toHaveLength(2);
    expect(last).toMatchObject({
      type: "done",
      message: {
        provider: "b",
        model: "steady",
        fallbackFrom: [{ provider: "a", model: "flaky", errorMessage: "429 Too Many Requests (gave up after 2 attempts)" }],
      },
    });
    expect(events[0]).toMatchObject({ type: "start", partial: { model: "steady", fallbackFrom: [{ model: "flaky" }] } });
  });

  // A `null` from the model it fell back to failed the call ("Cannot read properties of null"),
  // and a failure's message that is no text went into fallbackFrom as it was.
  it("passes on what is no event as it came, and records a failure whose message is no text as \"Model call failed\"", async () => {
    const odd = { ...down, error: { ...down.error, errorMessage: { toString: 1 } as unknown as string } };
    const model = withFallback([modelOfAttempts([from([primary.start, odd])], "primary"), modelOfAttempts([from([null as unknown as ModelEvent, secondary.start, secondary.done])], "secondary")]);
    const events = await lastValueFrom(model.stream({ messages: [] }, live()).pipe(toArray()));
    expect(events[0]).toBeNull();
    expect(events.at(-1)).toMatchObject({ type: "done", message: { fallbackFrom: [{ provider: "test", model: "primary", errorMessage: "Model call failed" }] } });
  });
});
