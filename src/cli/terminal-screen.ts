import { clearLine, lineUp, paint, paintAll, type Styled } from "./ansi.js";
import { columnsOf, graphemes, printable, textColumns, truncateToColumns } from "./terminal-text.js";

/** Where the screen writes: a stream, and its width when it is a terminal. */
export interface ScreenOutput {
  write(text: string): unknown;
  columns?: number;
}

/** The line a person is typing, which the screen redraws after each write. */
export interface InputLine {
  /** Redraws the prompt and what has been typed, leaving the cursor where it was. */
  redraw(): void;
}

export interface TerminalScreenOptions {
  /**
   * Keep a live area at the bottom (the line being streamed, a status line, the input line)
   * and wrap text to the width. Off for pipes: then text is written straight through.
   */
  live: boolean;
  color: boolean;
  input?: InputLine;
}

/**
 * The terminal as the chat draws it: finished lines scroll up; at the bottom sit the line the
 * assistant is still writing, a status line (spinner, progress) and the input line, so a person
 * can type while the agent streams.
 *
 * Why wrap ourselves: the unfinished line must stay one terminal row, so that erasing the live
 * area is "clear this row, go up, clear that row" without guessing how the terminal wrapped.
 * Widths are counted per grapheme (a CJK character or an emoji takes two columns), and every
 * text passes through `printable` first: a reply's own escape sequences never reach the terminal.
 */
export class TerminalScreen {
  private partial: Styled[] = [];
  private partialWidth = 0;
  private status: string | undefined;
  private drawnRows = 0;

  constructor(
    private readonly output: ScreenOutput,
    private readonly options: TerminalScreenOptions,
  ) {}

  /** Appends output. */
  write(unsafePieces: readonly Styled[]): void {
    if (unsafePieces.length === 0) return;
    const pieces = printablePieces(unsafePieces);
    if (!this.options.live) {
      this.output.write(paintAll(pieces, this.options.color));
      return;
    }
    this.erase();
    let committed = "";
    for (const piece of pieces) {
      for (const grapheme of graphemes(piece.text)) {
        if (grapheme === "\n") {
          committed += `${paintAll(this.partial, this.options.color)}\n`;
          this.partial = [];
          this.partialWidth = 0;
          continue;
        }
        const columns = columnsOf(grapheme);
        // A wide character that would not fit in the last column goes to the next row whole.
        if (this.partialWidth + columns > this.width()) committed += this.wrap();
        this.append(grapheme, piece.style, columns);
        if (this.partialWidth >= this.width()) committed += this.wrap();
      }
    }
    this.output.write(committed);
    this.draw();
  }

  /** Shows a status line under the output, or removes it (`undefined`). Live screens only. */
  setStatus(status: string | undefined): void {
    if (!this.options.live || status === this.status) return;
    this.erase();
    this.status = status === undefined ? undefined : truncateToColumns(printable(status), this.width());
    this.draw();
  }

  /**
   * Call when the person pressed Enter: readline moved the cursor below the typed line, which
   * is replaced by `echo` (if any) as a finished line.
   */
  lineEntered(unsafeEcho?: Styled[]): void {
    const echo = unsafeEcho === undefined ? undefined : printablePieces(unsafeEcho);
    if (!this.options.live) {
      if (echo) this.output.write(`${paintAll(echo, this.options.color)}\n`);
      return;
    }
    this.output.write(lineUp);
    this.erase();
    if (echo) this.output.write(`${paintAll(echo, this.options.color)}\n`);
    this.draw();
  }

  /** Finishes the unfinished line and removes the status and input lines, before exiting. */
  close(): void {
    if (!this.options.live) return;
    this.erase();
    if (this.partialWidth > 0) this.output.write(`${paintAll(this.partial, this.options.color)}\n`);
    this.partial = [];
    this.partialWidth = 0;
    this.status = undefined;
  }

  private append(grapheme: string, style: Styled["style"], columns: number): void {
    const last = this.partial[this.partial.length - 1];
    if (last && last.style === style) this.partial[this.partial.length - 1] = { style, text: last.text + grapheme };
    else this.partial.push({ style, text: grapheme });
    this.partialWidth += columns;
  }

  /** Breaks the full unfinished line at its last space; returns the finished part, painted. */
  private wrap(): string {
    const plain = this.partial.map((piece) => piece.text).join("");
    const space = plain.lastIndexOf(" ");
    const cut = space > 0 ? space + 1 : plain.length;
    const head: Styled[] = [];
    const tail: Styled[] = [];
    let offset = 0;
    for (const piece of this.partial) {
      const end = offset + piece.text.length;
      if (end <= cut) head.push(piece);
      else if (offset >= cut) tail.push(piece);
      else {
        head.push({ style: piece.style, text: piece.text.slice(0, cut - offset) });
        tail.push({ style: piece.style, text: piece.text.slice(cut - offset) });
      }
      offset = end;
    }
    this.partial = tail;
    this.partialWidth = textColumns(plain.slice(cut));
    return `${paintAll(head, this.options.color)}\n`;
  }

  /** Clears every row of the live area; the cursor ends at the start of its top row. */
  private erase(): void {
    if (this.drawnRows === 0) return;
    this.output.write(clearLine + (lineUp + clearLine).repeat(this.drawnRows - 1));
    this.drawnRows = 0;
  }

  private draw(): void {
    const rows: string[] = [];
    if (this.partialWidth > 0) rows.push(paintAll(this.partial, this.options.color));
    if (this.status !== undefined) rows.push(paint("dim", this.status, this.options.color));
    if (this.options.input) {
      this.output.write(rows.map((row) => `${row}\n`).join(""));
      this.options.input.redraw();
      this.drawnRows = rows.length + 1;
    } else {
      this.output.write(rows.join("\n"));
      this.drawnRows = rows.length;
    }
  }

  private width(): number {
    return Math.max(20, (this.output.columns ?? 80) - 1);
  }
}

function printablePieces(pieces: readonly Styled[]): Styled[] {
  return pieces.map((piece) => ({ style: piece.style, text: printable(piece.text) }));
}
