import { describe, expect, it } from "vitest";
import { parseChatCommand } from "../../src/cli/chat-commands.js";

describe("parseChatCommand", () => {
  it.each([
    ["", { kind: "empty" }],
    ["   ", { kind: "empty" }],
    ["what is 2+2", { kind: "message", text: "what is 2+2" }],
    ["/later and the time?", { kind: "later", text: "and the time?" }],
    ["/later", { kind: "unknown", command: "/later (it needs a message: /later <text>)" }],
    ["/quit", { kind: "quit" }],
    ["/exit", { kind: "quit" }],
    ["/reset", { kind: "reset" }],
    ["/help", { kind: "help" }],
    ["//etc is a folder", { kind: "message", text: "/etc is a folder" }],
    ["/frobnicate", { kind: "unknown", command: "/frobnicate" }],
    ["/cancel", { kind: "cancel" }],
    ["/cancel 2", { kind: "cancel", number: 2 }],
    ["/cancel 0", { kind: "unknown", command: "/cancel (it takes a tool call's number, or nothing for the last running one)" }],
    ["/cancel two", { kind: "unknown", command: "/cancel (it takes a tool call's number, or nothing for the last running one)" }],
  ])("%j", (line, command) => {
    expect(parseChatCommand(line)).toStrictEqual(command);
  });
});
