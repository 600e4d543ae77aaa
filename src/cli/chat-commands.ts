/** What a typed line means. */
export type ChatCommand =
  | { kind: "empty" }
  | { kind: "message"; text: string }
  | { kind: "later"; text: string }
  | { kind: "quit" }
  | { kind: "reset" }
  | { kind: "help" }
  | { kind: "unknown"; command: string };

/** The text `/help` prints. */
export const chatHelp = [
  "Type a message and press Enter. While the agent works, what you type steers it:",
  "it is injected before its next model call.",
  "  /later <text>  queue a follow-up, handled when the agent would stop",
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
    case "help":
    case "?":
      return { kind: "help" };
    default:
      return { kind: "unknown", command: `/${command}` };
  }
}
