import { Type } from "@sinclair/typebox";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { waitFor } from "../server/helpers.js";

/**
 * A tool that runs until the test finishes it: `started()` says whether it runs, `toolStarted()`
 * waits for that and gives the finishing function, `finish()` finishes it if it runs.
 */
export function waitTool() {
  let finishTool: (() => void) | undefined;
  const wait = defineTool({
    name: "wait",
    description: "Waits until the test lets it finish",
    parameters: Type.Object({}),
    execute: () => new Promise<ReturnType<typeof textResult>>((resolve) => (finishTool = () => resolve(textResult("done")))),
  });
  return {
    wait,
    started: () => finishTool !== undefined,
    toolStarted: () => waitFor(() => finishTool, "the tool to start", 20_000),
    finish: () => finishTool?.(),
  };
}
