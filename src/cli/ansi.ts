/** The looks the terminal UI uses; `paint` turns them into ANSI escape codes. */
export type Style = "plain" | "dim" | "bold" | "user" | "tool" | "success" | "error" | "warning";

/** A piece of output and how it looks. */
export interface Styled {
  text: string;
  style: Style;
}

const codes: Record<Style, string> = {
  plain: "",
  dim: "\u001b[2m",
  bold: "\u001b[1m",
  user: "\u001b[1;34m",
  tool: "\u001b[36m",
  success: "\u001b[32m",
  error: "\u001b[31m",
  warning: "\u001b[33m",
};
const reset = "\u001b[0m";

/** `text` in `style`, or unchanged when colour is off (a pipe, `NO_COLOR`). */
export function paint(style: Style, text: string, color: boolean): string {
  const code = codes[style];
  return color && code !== "" && text !== "" ? `${code}${text}${reset}` : text;
}

/** Styled pieces as one string. */
export function paintAll(pieces: readonly Styled[], color: boolean): string {
  return pieces.map((piece) => paint(piece.style, piece.text, color)).join("");
}

/** Erases the cursor's line and returns to its first column. */
export const clearLine = "\r\u001b[2K";
/** Moves the cursor one line up. */
export const lineUp = "\u001b[1A";

/** Spinner frames (braille dots), one per tick. */
export const spinnerFrames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const;
