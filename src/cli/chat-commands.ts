/** What a typed line means. */
export type ChatCommand =
  | { kind: "empty" }
  | { kind: "message"; text: string }
  | { kind: "later"; text: string }
  | { kind: "quit" }
  | { kind: "reset" }
  | { kind: "help" }
  /** `number`: the run's n-th tool call (from 1, in the order they started); none: the last one still running. */
  | { kind: "cancel"; number?: number }
  | { kind: "unknown"; command: string };

/** The text `/help` prints. */
export const chatHelp = [
  "Type a message and press Enter. While the agent works, what you type steers it:",
  "it is injected before its next model call.",
  "  /later <text>  queue a follow-up, handled when the agent would stop",
  "  /cancel [n]    cancel the last running tool call, or the run's n-th (from 1, in start order)",
  "  y / n          approve or deny the oldest tool call waiting for your approval",
  "  /reset         forget the conversation",
  "  /help          this help",
  "  /quit          exit (also Ctrl-D)",
  "  Ctrl-C         abort the run; again to exit",
].join("\n");

/**
 * Reads one typed line: a slash command or a message. `//text` sends `/text` as a message.
 * @example parseChatCommand("/later and then the time?") // { kind: "later", text: "and then the time?" }
 */
export function parseChatCommand(line: string): ChatCommand {
  const text = line.trim();
  if (text === "") return { kind: "empty" };
  if (text.startsWith("//")) return { kind: "message", text: text.slice(1) };
  if (!text.startsWith("/")) return { kind: "message", text };
  const [command = "", ...rest] = text.slice(1).split(/\s+/);
  const argument = rest.join(" ").trim();
  switch (command.toLowerCase()) {
    case "later":
    case "followup":
      return argument === "" ? { kind: "unknown", command: "/later (it needs a message: /later <text>)" } : { kind: "later", text: argument };
    case "quit":
    case "exit":
    case "q":
      return { kind: "quit" };
    case "reset":
    case "clear":
      return { kind: "reset" };
    case "cancel":
      if (argument === "") return { kind: "cancel" };
      return /^[1-9]\d{0,5}$/.test(argument)
        ? { kind: "cancel", number: Number(argument) }
        : { kind: "unknown", command: "/cancel (it takes a tool call's number, or nothing for the last running one)" };
    case "help":
    case "?":
      return { kind: "help" };
    default:
      return { kind: "unknown", command: `/${command}` };
  }
}
