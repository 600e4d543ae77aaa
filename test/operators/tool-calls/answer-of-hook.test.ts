import { firstValueFrom, isObservable, NEVER, of } from "rxjs";
import { describe, expect, it } from "vitest";
import { answerOfHook, type HookOutcomes } from "../../../src/operators/tool-calls/answer-of-hook.js";
import { BatchInterruption } from "../../../src/operators/tool-calls/tool-batch.js";

const outcomes: HookOutcomes<string, string> = {
  answered: (answer) => `answered ${answer ?? "nothing"}`,
  failed: (error) => `failed ${String(error)}`,
  interrupted: (reason) => `interrupted ${reason}`,
};

describe("answerOfHook", () => {
  it("gives the outcome itself, synchronously, for a plain answer or a throw", () => {
    const interruption = new BatchInterruption();
    expect(answerOfHook(() => "yes", outcomes, interruption)).toBe("answered yes");
    expect(answerOfHook(() => undefined, outcomes, interruption)).toBe("answered nothing");
    expect(
      answerOfHook(
        () => {
          throw "boom";
        },
        outcomes,
        interruption,
      ),
    ).toBe("failed boom");
  });

  it("waits for a Promise or an Observable, and turns a rejection into the failed outcome", async () => {
    const interruption = new BatchInterruption();
    const promised = answerOfHook(() => Promise.resolve("later"), outcomes, interruption);
    const observed = answerOfHook(() => of("a", "b"), outcomes, interruption);
    const rejected = answerOfHook<string, string>(() => Promise.reject(new Error("no")), outcomes, interruption);
    for (const outcome of [promised, observed, rejected]) expect(isObservable(outcome)).toBe(true);
    expect(await firstValueFrom(promised as never)).toBe("answered later");
    expect(await firstValueFrom(observed as never)).toBe("answered b");
    expect(await firstValueFrom(rejected as never)).toBe("failed Error: no");
  });

  it("lets the batch's interruption win over an answer that has not come", async () => {
    const interruption = new BatchInterruption();
    const pending = answerOfHook(() => NEVER, outcomes, interruption);
    const outcome = firstValueFrom(pending as never);
    interruption.interrupt("steered");
    expect(await outcome).toBe("interrupted steered");
  });
});
