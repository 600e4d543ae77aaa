import { createInterface, type Interface } from "node:readline";
import { merge, Observable, share } from "rxjs";
import type { InputLine } from "./terminal-screen.js";

export interface InputReaderOptions {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
  /** The prompt shown at the start of the input line (terminals only). */
  prompt: string;
  /** Where interrupts come from besides Ctrl-C in the terminal, e.g. `kill -INT`. Default: `process`. */
  signals?: NodeJS.EventEmitter;
}

/**
 * Lines a person types, as Observables, whether stdin is a terminal (line editing, a prompt,
 * Ctrl-C as a key) or a pipe (one line per message, SIGINT from outside).
 */
export class InputReader implements InputLine {
  /** Each line typed or piped in; completes at end of input (Ctrl-D, EOF). */
  readonly lines: Observable<string>;
  /** Ctrl-C in the terminal, or SIGINT sent to the process. */
  readonly interrupts: Observable<void>;
  /** True when stdin is a terminal. */
  readonly interactive: boolean;
  private readonly readline: Interface;

  constructor(options: InputReaderOptions) {
    this.interactive = options.input.isTTY === true;
    this.readline = createInterface({
      input: options.input,
      // In a pipe readline must not echo, so it gets no output at all.
      ...(this.interactive ? { output: options.output, prompt: options.prompt, terminal: true } : { terminal: false }),
    });
    const readline = this.readline;
    this.lines = new Observable<string>((subscriber) => {
      const onLine = (line: string) => subscriber.next(line);
      const onClose = () => subscriber.complete();
      readline.on("line", onLine);
      readline.on("close", onClose);
      return () => {
        readline.off("line", onLine);
        readline.off("close", onClose);
      };
    }).pipe(share());
    const signals = options.signals ?? process;
    const fromEmitter = (emitter: NodeJS.EventEmitter, name: string) =>
      new Observable<void>((subscriber) => {
        // Listening also stops Node's default of exiting on SIGINT.
        const handler = () => subscriber.next();
        emitter.on(name, handler);
        return () => emitter.off(name, handler);
      });
    this.interrupts = merge(fromEmitter(readline, "SIGINT"), fromEmitter(signals, "SIGINT")).pipe(share());
  }

  /** What has been typed on the input line so far (terminals only). */
  get pending(): string {
    return this.readline.line;
  }

  /** Clears what has been typed, e.g. on Ctrl-C at an idle prompt. */
  clearPending(): void {
    this.readline.write("", { ctrl: true, name: "u" });
  }

  redraw(): void {
    if (this.interactive) this.readline.prompt(true);
  }

  close(): void {
    this.readline.close();
  }
}
