import type { WebSocketLike } from "../../src/client/index.js";
import type { ServerFrame } from "../../src/protocol/protocol-schemas.js";

/** A socket the test plays the server on: it opens at once and answers what the test sends. */
export class ScriptedSocket implements WebSocketLike {
  static last: ScriptedSocket | undefined;
  readyState = 1;
  readonly sent: { type: string; id?: string }[] = [];
  private readonly listeners = new Map<string, ((event: never) => void)[]>();

  constructor(_url: string) {
    ScriptedSocket.last = this;
    queueMicrotask(() => this.emit("open", undefined as never));
  }

  send(data: string): void {
    this.sent.push(JSON.parse(data) as { type: string; id?: string });
  }

  close(): void {
    this.readyState = 3;
  }

  addEventListener(type: string, listener: (event: never) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  serve(frame: ServerFrame): void {
    this.emitRaw(JSON.stringify(frame));
  }

  /** Delivers `data` as one text message, JSON or not. */
  emitRaw(data: string): void {
    this.emit("message", { data } as never);
  }

  private emit(type: string, event: never): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
}
