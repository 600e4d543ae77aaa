import { Type } from "@sinclair/typebox";
import { filter, lastValueFrom } from "rxjs";
import { describe, expect, expectTypeOf, it } from "vitest";
import { agentLoop } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";

// docs/agent.md's "Structured output" example, verbatim but for the imports and a scripted model
// in place of the pi-ai one: keep them in step.
describe("README structured output", () => {
  it("ends with the typed answer", async () => {
    const model = scriptedModel([{ content: [{ type: "toolCall", name: "final_answer", arguments: { city: "Paris", celsius: 21 } }] }]);

    const Weather = Type.Object({ city: Type.String(), celsius: Type.Number() });
    const end = await lastValueFrom(
      agentLoop([{ role: "user", content: "Paris: 21 °C, sunny. Extract the weather.", timestamp: Date.now() }], { messages: [] }, { model, output: Weather })
        .pipe(filter((event) => event.type === "agent_end")),
    );
    console.log(end.output?.celsius); // number | undefined, typed from the schema

    expectTypeOf(end.output).toEqualTypeOf<{ city: string; celsius: number } | undefined>();
    expect(end.output).toStrictEqual({ city: "Paris", celsius: 21 });
  });
});
