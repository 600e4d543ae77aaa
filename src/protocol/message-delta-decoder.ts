import type { AgentEvent, AssistantMessage, ModelEvent } from "../types.js";
import { contentBlockAt, contentLength } from "../util/shared-content.js";
import { withField } from "../util/with-field.js";
import { type EndFrame, impliedPatch, isEnd, type UpdateFrame } from "./message-delta.js";
import { type ArgumentText, PatchedMessage } from "./patched-message.js";

type Fields = Record<string, unknown>;

/**
 * The receiver's side: holds the streaming message and turns update frames back into the
 * `message_update` events the sender's agent emitted.
 */
export class MessageDeltaDecoder {
  /** The streaming message; its blocks are shared between the messages decoded (see PatchedMessage). */
  private readonly message = new PatchedMessage();

  /** The streaming message as of the last frame, or undefined when none streams. */
  get current(): AssistantMessage | undefined {
    return this.message.current;
  }

  /** Sets the streaming message: from a snapshot (with its `argumentTexts`), or undefined when none streams. */
  reset(message: AssistantMessage | undefined, argumentTexts?: readonly ArgumentText[]): void {
    if (message === undefined) this.message.clear();
    else this.load(message, argumentTexts);
  }

  /** The argument text of each tool call still streaming, for a snapshot made from what this decoded. */
  argumentTexts(): ArgumentText[] {
    return this.message.argumentTexts();
  }

  /** Follows ordinary events, so the next update has its base. */
  observe(event: AgentEvent): void {
    if (event.type === "message_start" && event.message.role === "assistant") this.load(event.message);
    else if (event.type === "message_end") this.message.clear();
    else if (event.type === "message_update") this.load(event.message);
  }

  /** The `message_end` an `end` frame stands for (protocol 3): the message held, with the frame's patch applied. */
  end(frame: EndFrame): Extract<AgentEvent, { type: "message_end" }> {
    if (this.message.current === undefined) throw new Error(`End frame ${frame.seq} arrived outside a streaming message.`);
    this.message.apply(frame.patch ?? []);
    const message = this.message.current as AssistantMessage;
    this.message.clear();
    return { type: "message_end", message };
  }

  decode(frame: UpdateFrame): Extract<AgentEvent, { type: "message_update" }> {
    if (frame.message === undefined && this.message.current === undefined) throw new Error(`Update frame ${frame.seq} arrived outside a streaming message.`);
    let message: AssistantMessage;
    if (frame.message !== undefined) {
      message = frame.message;
      this.load(message, frame.argumentTexts);
    } else {
      const named = typeof frame.event.contentIndex === "number" ? frame.event.contentIndex : undefined;
      // Kept whatever the protocol: a `j` operation later in this call parses it.
      if (frame.event.type === "toolcall_delta" && named !== undefined && typeof frame.event.delta === "string") this.message.appendArguments(named, frame.event.delta);
      this.message.apply(frame.patch ?? impliedPatch(frame.event), isEnd(frame.event.type) ? named : undefined);
      message = this.message.current as AssistantMessage;
    }
    // Not a spread: see withField.
    const event = withField(frame.event as Fields, "partial", message) as Fields;
    // contentBlockAt: reading `content` would build a long message's array.
    const block = typeof event.contentIndex === "number" ? contentBlockAt(message, event.contentIndex) : undefined;
    if (event.type === "text_end" && event.content === undefined && block?.type === "text") event.content = block.text;
    if (event.type === "thinking_end" && event.content === undefined && block?.type === "thinking") event.content = block.thinking;
    if (event.type === "toolcall_end" && event.toolCall === undefined) event.toolCall = block;
    return { type: "message_update", message, assistantMessageEvent: event as unknown as ModelEvent };
  }

  /**
   * A message from a snapshot or a whole event: which blocks still stream it does not say. Only
   * the last counts as streaming (blocks stream in order); a patch to an earlier one still
   * applies, at the cost of a copy of the content.
   */
  private load(message: AssistantMessage, argumentTexts?: readonly ArgumentText[]): void {
    this.message.load(message, contentLength(message) - 1, argumentTexts);
  }
}
