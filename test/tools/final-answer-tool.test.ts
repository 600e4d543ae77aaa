import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { FINAL_ANSWER_TOOL, finalAnswerTool } from "../../src/tools/final-answer-tool.js";

const Answer = Type.Object({ answer: Type.String() });
const context = { signal: new AbortController().signal, update: () => undefined };

describe("finalAnswerTool", () => {
  it("takes the schema as its parameters and returns the arguments as details, asking the loop to stop", () => {
    const tool = finalAnswerTool(Answer);
    expect([tool.name, tool.label, tool.parameters]).toStrictEqual([FINAL_ANSWER_TOOL, "Final answer", Answer]);
    expect(tool.execute("call_1", { answer: "42" }, context)).toStrictEqual({
      content: [{ type: "text", text: "Final answer received." }],
      details: { answer: "42" },
      terminate: true,
    });
  });

  it("takes a name and a description, checked like any tool's", () => {
    const tool = finalAnswerTool(Answer, { name: "submit_report", description: "Submits the report." });
    expect([tool.name, tool.description]).toStrictEqual(["submit_report", "Submits the report."]);
    expect(() => finalAnswerTool(Answer, { name: "submit report" })).toThrow(TypeError);
  });

  it("rejects a schema that does not describe an object", () => {
    expect(() => finalAnswerTool(Type.String())).toThrow(
      new TypeError('output must be an object schema (tool arguments are JSON objects), not "string": wrap it, e.g. Type.Object({ answer: ... }).'),
    );
  });
});
