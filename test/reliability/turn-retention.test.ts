import { Type } from "@sinclair/typebox";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Observable } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AssistantMessage, Model, ModelEvent } from "../../src/types.js";
import { userMessage } from "../testing/fixtures.js";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

function reply(stopReason: "toolUse" | "stop"): AssistantMessage {
  return {
    role: "assistant",
    content: stopReason === "toolUse" ? [{ type: "toolCall", id: "t1", name: "echo", arguments: {} }] : [{ type: "text", text: "Done" }],
    api: "test",
    provider: "test",
    model: "test",
    usage: emptyUsage(),
    stopReason,
    timestamp: 0,
  };
}

/**
 * A model that answers synchronously with messages that share all they can, so the transcript
 * grows by as little as a turn can add: the assistant message with its call (an id of its own:
 * a repeated one is renamed, which copies the message), the tool's result message, two array
 * slots and a slot of the run's table of call ids.
 */
function sharedReplyModel(toolTurns: number): Model {
  const toolUse = reply("toolUse");
  const call = toolUse.content[0]!;
  const stop = reply("stop");
  let calls = 0;
  return {
    id: "test",
    provider: "test",
    api: "test",
    stream: () =>
      new Observable<ModelEvent>((subscriber) => {
        const message = calls++ < toolTurns ? { ...toolUse, content: [{ ...call, id: `t${calls}` }] } : stop;
        subscriber.next({ type: "start", partial: message });
        subscriber.next({ type: "done", reason: message.stopReason === "toolUse" ? "toolUse" : "stop", message });
        subscriber.complete();
      }),
  };
}

describe("a long run", () => {
  it("keeps nothing of a finished turn but its messages", () => {
    // Regression: each turn's continuation subject held the next turn, which held its own
    // subject, so every turn of a run stayed reachable (about 900 bytes a turn, bench W4).
    const echo = defineTool({ name: "echo", description: "e", parameters: Type.Object({}), execute: () => textResult("ok") });
    const [from, to] = [1_000, 5_000];
    const heapAt = new Map<number, number>();
    let turns = 0;
    agentLoop([userMessage("go")], { messages: [], tools: [echo] }, { model: sharedReplyModel(to + 10) }).subscribe((event) => {
      if (event.type !== "turn_end") return;
      turns += 1;
      if (turns !== from && turns !== to) return;
      collectGarbage();
      heapAt.set(turns, process.memoryUsage().heapUsed);
    });
    const bytesPerTurn = (heapAt.get(to)! - heapAt.get(from)!) / (to - from);
    // A turn adds its two messages with their content, array slots and its call's id: 460 to
    // 570 bytes measured. The leak this guards against added about 900 bytes a turn more.
    expect(bytesPerTurn).toBeLessThan(800);
  });
});
