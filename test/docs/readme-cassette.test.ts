import { describe, expect, it } from "vitest";
import { filter, map } from "rxjs";
import { agentLoop, type AssistantMessage } from "../../src/index.js";
import { demoTools } from "../../src/demo/index.js";
import { cassetteModel, configureMarbles } from "../../src/testing/index.js";
import { readCassette } from "../../src/testing/node/index.js";

// docs/testing.md's "Turn a bug report into a test" example, verbatim but for the imports: keep them in step.
const marbles = configureMarbles((actual, expected) => expect(actual).toStrictEqual(expected));

describe("docs/testing.md", () => {
  it("answers 12*7 with the calculator, as recorded", marbles(({ scheduler, expectObservable }) => {
    const cassette = readCassette("test/fixtures/cassettes/calculator.cassette.jsonl");
    const model = cassetteModel(cassette, { scheduler });
    const tools = demoTools({ root: "/tmp/my-app", scheduler, stepDelay: 30 });
    const { systemPrompt } = cassette.calls[0]!.request;
    const prompt = { role: "user" as const, content: "what is 12*7", timestamp: 0 };
    const run = agentLoop([prompt], { systemPrompt, messages: [], tools }, { model, scheduler });
    const ends = run.pipe(filter((event) => event.type === "turn_end"), map((event) => (event.message as AssistantMessage).content.at(-1)));
    expectObservable(ends).toBe("181ms a 36ms (b|)", {
      a: { type: "toolCall", id: "demo_1_1", name: "calculator", arguments: { expression: "12*7" } },
      b: { type: "text", text: "12*7 = 84." },
    });
  }));
});
