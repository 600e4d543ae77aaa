/**
 * An `Agent` driven by a JavaScript caller that passes anything: `prompt`, `run`, `steer`,
 * `followUp`, `approve`, `deny`, `cancelToolCall`, `abort`, `reset`, `continue`,
 * `replaceState`, `configure`, `clearAllQueues`, `waitForIdle`, `snapshot` and `dispose`, with
 * arguments of any kind, in random order, while runs stream and tools wait for approval
 * (property-based, real time).
 *
 * Whatever it is given, a call either works or is refused with the library's own error (an
 * `RxAgentError`, never a TypeError from inside), a Promise it returns rejects with one, no
 * rejection is left unhandled, `waitForIdle` settles after an abort, the transcript holds only
 * messages, and an agent not disposed answers a well-formed prompt to its `agent_end`.
 */
import { Type } from "@sinclair/typebox";
import fc from "fast-check";
import { asyncScheduler, isObservable, lastValueFrom } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { RxAgentError } from "../../src/errors.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { isPromiseLike } from "../../src/util/is-promise-like.js";

/** Waits `ms` of real time, or ends at once when its signal fires. A call of 10 ms or more waits for approval. */
const wait = defineTool({
  name: "wait",
  description: "Waits.",
  parameters: Type.Object({ ms: Type.Number() }),
  needsApproval: ({ ms }) => ms >= 10,
  execute: (_toolCallId, { ms }, { signal }) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(textResult("waited")), ms);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(textResult("stopped"));
      });
    }),
});

/** Every third reply calls `wait` twice, once with approval; the others answer with text. */
const reply = (index: number): ScriptedTurn =>
  index % 3 === 0
    ? {
        content: [
          { type: "toolCall", id: `quick_${index}`, name: "wait", arguments: { ms: 5 } },
          { type: "toolCall", id: `approved_${index}`, name: "wait", arguments: { ms: 20 } },
        ],
      }
    : `reply ${index}`;

/** What a careless caller passes, near misses of the real shapes included. */
const anything = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constantFrom(
    undefined,
    null,
    "",
    "hi",
    [],
    {},
    { text: 7 },
    { text: "see", images: "cat.png" },
    { role: "user" },
    { role: "user", content: 5 },
    { role: "user", content: [{ type: "image" }] },
    { role: "assistant", content: [] },
    [{ role: "user", content: "x", timestamp: 0 }],
    "approved_0",
    "quick_0",
  ),
);

const call = fc.oneof(
  fc.record({ method: fc.constantFrom("prompt", "run", "steer", "followUp", "replaceState", "configure", "abort"), first: anything, second: fc.constant(undefined) }),
  fc.record({ method: fc.constantFrom("approve", "deny", "cancelToolCall"), first: fc.oneof(fc.constantFrom("approved_0", "quick_0", "approved_3"), anything), second: anything }),
  fc.record({ method: fc.constantFrom("reset", "continue", "clearAllQueues", "waitForIdle", "snapshot", "dispose"), first: anything, second: fc.constant(undefined) }),
  fc.record({ method: fc.constant("sleep"), first: fc.integer({ min: 0, max: 25 }), second: fc.constant(undefined) }),
);

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => process.on("unhandledRejection", onUnhandled));
afterAll(() => process.off("unhandledRejection", onUnhandled));

/** `promise`, or a rejection naming `what` once `limitMs` have passed (a limit that holds at a load of 8, not a margin). */
function within<T>(promise: Promise<T>, what: string, limitMs = 20_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not settle within ${limitMs} ms`)), limitMs)));
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

describe("an Agent called with arguments of any kind (property-based)", () => {
  it("refuses what it cannot take with its own errors, settles, and still answers a prompt", { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 15 }), async (calls) => {
        unhandled.length = 0;
        const agent = new Agent({ model: scriptedModel(Array.from({ length: 100 }, (_, index) => reply(index)), { scheduler: asyncScheduler, delay: 1 }), tools: [wait] });
        agent.subscribe((event) => {
          if (event.type === "tool_approval_start") agent.approve(event.toolCallId);
        });
        const refusals: unknown[] = [];
        let disposed = false;
        for (const { method, first, second } of calls) {
          if (method === "sleep") {
            await new Promise((resolve) => setTimeout(resolve, first as number));
            continue;
          }
          if (method === "dispose") disposed = true;
          try {
            const answer: unknown = (agent as unknown as Record<string, (...args: unknown[]) => unknown>)[method]!(first, second);
            if (isObservable(answer)) answer.subscribe({ error: (error: unknown) => refusals.push(error) });
            else if (isPromiseLike(answer)) answer.then(undefined, (error: unknown) => refusals.push(error));
          } catch (error) {
            refusals.push(error);
          }
        }
        agent.abort();
        await within(agent.waitForIdle(), "waitForIdle after abort");
        if (!disposed) await within(lastValueFrom(agent.prompt("last")).then(() => undefined, (error: unknown) => refusals.push(error)), "the last prompt");
        agent.dispose();
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(refusals.filter((error) => !(error instanceof RxAgentError))).toStrictEqual([]);
        expect(unhandled).toStrictEqual([]);
        expect(agent.state.messages.every((message) => typeof message === "object" && message !== null && typeof message.role === "string")).toBe(true);
        if (!disposed) expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant" });
      }),
      { numRuns: 100 },
    );
  });
});
