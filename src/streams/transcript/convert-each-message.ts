import { HookError } from "../../errors.js";
import { describe } from "../../model/check-model-message.js";
import { isModelMessage } from "../../types/messages.js";
import type { AgentMessage, ConvertMessageToLlm, Message } from "../../types.js";
import { synchronousAnswer } from "../../util/synchronous-answer.js";

/** What one message converted to: one model message, several, or `null` for none. */
type Converted = Message | readonly Message[] | null;

/**
 * Conversions already made, per conversion function, by message identity. Why keyed by the
 * function and held here rather than in a run: an `Agent` starts a run per prompt, and the
 * same messages must not be converted again by the next run. Both levels are weak, so an entry
 * lives as long as its message (and its function) does.
 */
const conversions = new WeakMap<ConvertMessageToLlm, WeakMap<AgentMessage, Converted>>();

/**
 * Appends to `into` what `convert` makes of each of `messages` from index `from` on, converting
 * a message only the first time this function sees it (by identity: a message object changed in
 * place keeps its first conversion; a new object is converted anew).
 *
 * Contract: throws a `HookError` ("convertMessageToLlm") when `convert` throws or returns
 * anything but a model message, an array of them or `undefined`.
 * @example convertEachMessage(transcript, 0, (message) => message, modelMessages)
 */
export function convertEachMessage(messages: readonly AgentMessage[], from: number, convert: ConvertMessageToLlm, into: Message[]): void {
  let cache = conversions.get(convert);
  if (cache === undefined) {
    cache = new WeakMap();
    conversions.set(convert, cache);
  }
  // On a throw `into` is as it was: a list carried to later model calls must not hold half a pass.
  const length = into.length;
  for (let index = from; index < messages.length; index++) {
    const message = messages[index]!;
    let converted = cache.get(message);
    if (converted === undefined) {
      try {
        converted = convertOne(convert, message, index);
      } catch (error) {
        into.length = length;
        throw error;
      }
      cache.set(message, converted);
    }
    if (converted === null) continue;
    if (isArray(converted)) into.push(...converted);
    else into.push(converted);
  }
}

/**
 * A growing transcript's model messages, brought up to date from where the last update stopped:
 * `convert`'s answers (`convertEachMessage`), or without `convert` the model messages as they are.
 * Why an object: an `Agent` hands the same one from run to run (checked-transcripts.ts), so a
 * prompt converts only what is new instead of looking every message up again (bench W4, Agent with
 * `convertMessageToLlm` over 10,000 turns).
 */
export class ConvertedMessages {
  /** The model messages; the same array from update to update. */
  readonly messages: Message[] = [];
  /** How many transcript messages are taken in. */
  private seen = 0;

  constructor(readonly convert: ConvertMessageToLlm | undefined) {}

  /**
   * Takes in the messages appended since the last update and returns the list.
   *
   * Contract: `transcript` is the one given before, or it with messages appended. Throws a
   * `HookError` as `convertEachMessage` does, leaving the list as it was.
   */
  update(transcript: readonly AgentMessage[]): readonly Message[] {
    if (this.convert !== undefined) {
      convertEachMessage(transcript, this.seen, this.convert, this.messages);
    } else {
      for (let index = this.seen; index < transcript.length; index++) {
        const message = transcript[index]!;
        if (isModelMessage(message)) this.messages.push(message);
      }
    }
    this.seen = transcript.length;
    return this.messages;
  }
}

function convertOne(convert: ConvertMessageToLlm, message: AgentMessage, index: number): Converted {
  let answer: unknown;
  try {
    answer = synchronousAnswer(convert(message));
  } catch (error) {
    throw new HookError("convertMessageToLlm", error);
  }
  if (answer === undefined || answer === null) return null;
  if (Array.isArray(answer)) {
    const bad = answer.findIndex((item: unknown) => !isConvertedMessage(item));
    if (bad >= 0) throw badAnswer(`${describeAnswer(answer[bad])} at [${bad}]`, index);
    return answer.length === 0 ? null : (answer as Message[]);
  }
  if (!isConvertedMessage(answer)) throw badAnswer(describeAnswer(answer), index);
  return answer;
}

function isConvertedMessage(value: unknown): value is Message {
  return typeof value === "object" && value !== null && isModelMessage(value as AgentMessage);
}

function describeAnswer(answer: unknown): string {
  const role = typeof answer === "object" && answer !== null ? (answer as { role?: unknown }).role : undefined;
  return typeof role === "string" ? `a "${role.slice(0, 40)}" message` : describe(answer);
}

function badAnswer(what: string, index: number): HookError {
  return new HookError("convertMessageToLlm", `for message #${index} it returned ${what}, not a user, assistant or toolResult message`);
}

function isArray(converted: Message | readonly Message[]): converted is readonly Message[] {
  return Array.isArray(converted);
}
