import { describe, expect, it } from "vitest";
import { pairedForModel, RESULT_NOT_SENT_TEXT } from "../../src/model/paired-for-model.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AssistantMessage, Message, ToolResultMessage } from "../../src/types.js";

const user = (text: string, timestamp = 1): Message => ({ role: "user", content: text, timestamp });
const calling = (ids: string[], stopReason: AssistantMessage["stopReason"] = "toolUse"): AssistantMessage => ({
  role: "assistant",
  content: ids.map((id) => ({ type: "toolCall", id, name: "read", arguments: {} })),
  api: "test",
  provider: "test",
  model: "test",
  usage: emptyUsage(),
  stopReason,
  timestamp: 2,
});
const result = (id: string): ToolResultMessage => ({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: `read ${id}` }], isError: false, timestamp: 3 });
const notSent = (id: string, timestamp: number): ToolResultMessage => ({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: RESULT_NOT_SENT_TEXT }], isError: true, timestamp });

describe("pairedForModel", () => {
  it("gives back the very array when every call has its one result, in any order", () => {
    const messages = [user("go"), calling(["a", "b"]), result("b"), result("a"), calling([]), user("more"), calling(["c"]), result("c")];
    expect(pairedForModel(messages)).toBe(messages);
    expect(pairedForModel([])).toStrictEqual([]);
  });

  it("leaves out a result whose call is not right before it, and a second result for one call", () => {
    const messages = [result("cut"), user("go"), calling(["a"]), result("a"), result("a"), user("more"), result("a")];
    expect(pairedForModel(messages)).toStrictEqual([user("go"), calling(["a"]), result("a"), user("more")]);
  });

  it("gives a call without its result an error result before the next message, and at the end", () => {
    const messages = [calling(["a", "b"]), result("b"), user("go", 5), calling(["c"])];
    expect(pairedForModel(messages)).toStrictEqual([calling(["a", "b"]), result("b"), notSent("a", 5), user("go", 5), calling(["c"]), notSent("c", 2)]);
  });

  it("expects no result for a failed message's calls (they are not sent), and leaves out any it has", () => {
    const failed = calling(["a"], "error");
    expect(pairedForModel([failed, user("go")])).toStrictEqual([failed, user("go")]);
    expect(pairedForModel([failed, result("a"), user("go")])).toStrictEqual([failed, user("go")]);
  });
});
