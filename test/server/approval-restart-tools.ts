import { Type } from "@sinclair/typebox";
import { defineTool, textResult } from "../../src/index.js";
import type { AgentTool } from "../../src/index.js";
import type { ScriptedTurn } from "../../src/testing/index.js";

/** The restart test's tools: deploy needs approval, read answers after 5 ms. `ran` lists the calls that ran. */
export function approvalTools(ran: string[]): AgentTool[] {
  return [
    defineTool({
      name: "deploy",
      description: "Deploys; a person must approve",
      parameters: Type.Object({ target: Type.String() }),
      needsApproval: true,
      execute: (id, { target }) => {
        ran.push(id);
        return textResult(`deployed to ${target}`);
      },
    }),
    defineTool({
      name: "read",
      description: "Reads",
      parameters: Type.Object({}),
      execute: (id) => {
        ran.push(id);
        return new Promise((resolve) => setTimeout(() => resolve(textResult("read it")), 5));
      },
    }),
  ];
}

/** One batch: the deploy first, so the read's result waits behind it for call order. */
export const approvalBatch: ScriptedTurn = {
  content: [
    { type: "text", text: "Reading, then deploying once you approve." },
    { type: "toolCall", id: "d1", name: "deploy", arguments: { target: "prod" } },
    { type: "toolCall", id: "r1", name: "read", arguments: {} },
  ],
};
