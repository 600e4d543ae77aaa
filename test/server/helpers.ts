import { asyncScheduler } from "rxjs";
import { WebSocket } from "ws";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import type { ServerFrame } from "../../src/protocol/protocol-schemas.js";
import type { SendableSocket } from "../../src/server/client-connection.js";
import { MessageDeltaDecoder } from "../../src/protocol/message-delta-decoder.js";
import { PROTOCOL_3_SUBPROTOCOL } from "../../src/protocol/protocol-version.js";
import { reduceAgentState } from "../../src/agent/agent-state.js";
import type { AgentEvent, AgentState } from "../../src/types.js";

/** A frame that carries an event: a whole one, a `message_update` as a delta, or a streamed message's `message_end` as a patch (protocol 3). */
export type EventCarrier = Extract<ServerFrame, { type: "event" | "update" | "end" }>;

/** Whether a frame carries an event. */
export function isEventCarrier(frame: ServerFrame): frame is EventCarrier {
  return frame.type === "event" || frame.type === "update" || frame.type === "end";
}

/** The type of the event a frame carries. */
export function carriedType(frame: EventCarrier): string {
  return frame.type === "update" ? "message_update" : frame.type === "end" ? "message_end" : frame.event.type;
}

/**
 * Polls `predicate` until it holds; fails with `what` after `timeoutMs`. The default is a limit,
 * not a margin: 20 s, under the test timeout (30 s), holds at a load average of 8 and more.
 */
export async function waitFor<T>(predicate: () => T | undefined | false, what = "condition", timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = predicate();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** An agent on a scripted model that streams in real time. */
export function realtimeAgent(turns: ScriptedTurn[], delay = 5, chunkSize?: number): Agent {
  return new Agent({ model: scriptedModel(turns, { scheduler: asyncScheduler, delay, ...(chunkSize === undefined ? {} : { chunkSize }) }) });
}

/** A protocol-level client that records every frame, for exact assertions. */
export class RawClient {
  readonly frames: ServerFrame[] = [];
  readonly socket: WebSocket;
  closeCode: number | undefined;
  closeReason: string | undefined;
  /** Bytes of every text frame received, fragments included. */
  receivedBytes = 0;
  private fragments: string[] = [];
  private nextId = 0;

  /** `protocols`: the subprotocols offered; by default `rxagent.3` (it reads protocol 3), `[]` for a client that reads only 2. */
  constructor(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}, protocols: string[] = [PROTOCOL_3_SUBPROTOCOL]) {
    this.socket = new WebSocket(url, protocols, options);
    this.socket.on("message", (data) => {
      const text = String(data);
      this.receivedBytes += Buffer.byteLength(text);
      const frame = JSON.parse(text) as ServerFrame;
      if (frame.type !== "fragment") return void this.frames.push(frame);
      this.fragments.push(frame.data);
      if (frame.final) this.frames.push(JSON.parse(this.fragments.splice(0).join("")) as ServerFrame);
    });
    this.socket.on("close", (code, reason) => {
      this.closeCode = code;
      this.closeReason = String(reason);
    });
    this.socket.on("error", () => undefined);
  }

  static async open(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}, protocols?: string[]): Promise<RawClient> {
    const client = new RawClient(url, options, protocols);
    await new Promise<void>((resolve, reject) => {
      client.socket.once("open", () => resolve());
      client.socket.once("error", reject);
    });
    return client;
  }

  /** Sends a command and returns its id (generated when the frame has none). */
  send(frame: Record<string, unknown>): string {
    const id = (frame.id as string | undefined) ?? `t${++this.nextId}`;
    this.socket.send(JSON.stringify({ id, ...frame }));
    return id;
  }

  /** Sends a command and waits for its ack or error. */
  async request(frame: Record<string, unknown>): Promise<Extract<ServerFrame, { type: "ack" | "error" }>> {
    const id = this.send(frame);
    return waitFor(
      () => this.frames.find((reply): reply is Extract<ServerFrame, { type: "ack" | "error" }> => (reply.type === "ack" || reply.type === "error") && reply.id === id),
      `a reply to ${JSON.stringify(frame)}`,
    );
  }

  events(): EventCarrier[] {
    return this.frames.filter(isEventCarrier);
  }

  eventTypes(): string[] {
    return this.events().map(carriedType);
  }

  hasEvent(type: string): boolean {
    return this.events().some((frame) => carriedType(frame) === type);
  }

  /** The agent events the frames stand for, rebuilt the way `connectAgent` does (from the last snapshot on). */
  agentEvents(): AgentEvent[] {
    const decoder = new MessageDeltaDecoder();
    const events: AgentEvent[] = [];
    for (const frame of this.frames) {
      if (frame.type === "snapshot") {
        decoder.reset(frame.state.streamingMessage, frame.argumentTexts);
        events.length = 0;
      } else if (frame.type === "update") {
        events.push(decoder.decode(frame));
      } else if (frame.type === "end") {
        events.push(decoder.end(frame));
      } else if (frame.type === "event") {
        decoder.observe(frame.event);
        events.push(frame.event);
      }
    }
    return events;
  }

  /**
   * What a client that follows the frames shows, rebuilt the way `connectAgent` does: the last
   * snapshot with every event after it applied, and the number of the last frame applied.
   */
  view(): { seq: number; state: AgentState } | undefined {
    let view: { seq: number; state: AgentState } | undefined;
    const decoder = new MessageDeltaDecoder();
    for (const frame of this.frames) {
      if (frame.type === "snapshot") {
        decoder.reset(frame.state.streamingMessage, frame.argumentTexts);
        // `reduceAgentState` updates in place: a copy keeps the recorded frame as it came.
        view = { seq: frame.seq, state: structuredClone(frame.state) };
      } else if ((frame.type === "update" || frame.type === "event" || frame.type === "end") && view !== undefined && frame.seq > view.seq) {
        const event = frame.type === "update" ? decoder.decode(frame) : frame.type === "end" ? decoder.end(frame) : frame.event;
        if (frame.type === "event") decoder.observe(event);
        view = { seq: frame.seq, state: reduceAgentState(view.state, event) };
      }
    }
    return view;
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.socket.once("close", () => resolve());
      this.socket.close();
    });
  }
}

/** Asserts frames' sequence numbers run contiguously from `after + 1`, merged ranges included. */
export function assertContiguous(frames: EventCarrier[], after: number): number {
  let expected = after + 1;
  for (const frame of frames) {
    const first = ("first" in frame ? frame.first : undefined) ?? frame.seq;
    if (first !== expected) throw new Error(`Expected seq ${expected}, got ${first}..${frame.seq}`);
    expected = frame.seq + 1;
  }
  return expected - 1;
}

/** A server-side socket for `ClientConnection` that takes every frame at once and keeps it. */
export class RecordingSocket implements SendableSocket {
  readonly sent: string[] = [];
  readyState = 1;
  bufferedAmount = 0;
  send(data: string, callback: (error?: Error) => void): void {
    this.sent.push(data);
    callback();
  }

  frames(): ServerFrame[] {
    return this.sent.map((json) => JSON.parse(json) as ServerFrame);
  }
}
