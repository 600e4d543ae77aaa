import type { AssistantMessage } from "../types/messages.js";
import { sameSerialized } from "../util/same-json.js";

/**
 * Changes to the fields of one object: `set` replaces a value, `append` adds to the end of a
 * string that only grew (a text delta), `unset` removes a field.
 */
export interface FieldChanges {
  set?: Record<string, unknown>;
  append?: Record<string, string>;
  unset?: string[];
}

/**
 * Changes from one assistant message to the next: the fields other than `content` as
 * `FieldChanges`, and `content` as its new length plus the changes of each block that changed.
 */
export interface MessageChanges extends FieldChanges {
  content?: { length: number; blocks?: Record<string, FieldChanges> };
}

type Fields = Record<string, unknown>;

/**
 * What turns `previous` into `next`, or `undefined` when they are equal. Why not the whole
 * message per event: a reply of n tokens carries its partial text n times, so the file would
 * grow with the square of the reply.
 */
export function messageChanges(previous: AssistantMessage | undefined, next: AssistantMessage): MessageChanges | undefined {
  const { content: previousContent = [], ...previousFields } = (previous ?? {}) as Partial<AssistantMessage>;
  const { content: nextContent, ...nextFields } = next;
  const changes: MessageChanges = fieldChanges(previousFields, nextFields) ?? {};
  if (previous === undefined || !sameSerialized(previousContent, nextContent)) {
    const blocks: Record<string, FieldChanges> = {};
    nextContent.forEach((block, index) => {
      const blockChanges = fieldChanges((previousContent[index] ?? {}) as Fields, block as unknown as Fields);
      if (blockChanges) blocks[index] = blockChanges;
    });
    changes.content = Object.keys(blocks).length > 0 ? { length: nextContent.length, blocks } : { length: nextContent.length };
  }
  return Object.keys(changes).length > 0 ? changes : undefined;
}

/** Applies `changes` to `previous` (the first event: `undefined`), as a new message. */
export function applyMessageChanges(previous: AssistantMessage | undefined, changes: MessageChanges | undefined): AssistantMessage {
  const base = (previous ?? { content: [] }) as AssistantMessage;
  if (changes === undefined) return { ...base, content: [...base.content] };
  const { content, ...fields } = changes;
  const next = applyFieldChanges(base as unknown as Fields, fields) as unknown as AssistantMessage;
  const length = content?.length ?? base.content.length;
  next.content = Array.from({ length }, (_unused, index) => {
    const blockChanges = content?.blocks?.[index];
    const block = base.content[index];
    return (blockChanges ? applyFieldChanges((block ?? {}) as Fields, blockChanges) : block) as AssistantMessage["content"][number];
  });
  return next;
}

function fieldChanges(previous: Fields, next: Fields): FieldChanges | undefined {
  const changes: Required<FieldChanges> = { set: {}, append: {}, unset: [] };
  // A field set to `undefined` is absent in JSON, so it counts as absent here too.
  for (const [key, value] of Object.entries(next)) {
    const old = previous[key];
    if (value === undefined || old === value || (old !== undefined && sameSerialized(old, value))) continue;
    if (typeof old === "string" && old !== "" && typeof value === "string" && value.startsWith(old)) {
      changes.append[key] = value.slice(old.length);
    } else {
      changes.set[key] = value;
    }
  }
  for (const [key, value] of Object.entries(previous)) if (value !== undefined && next[key] === undefined) changes.unset.push(key);
  const result: FieldChanges = {};
  if (Object.keys(changes.set).length > 0) result.set = changes.set;
  if (Object.keys(changes.append).length > 0) result.append = changes.append;
  if (changes.unset.length > 0) result.unset = changes.unset;
  return Object.keys(result).length > 0 ? result : undefined;
}

function applyFieldChanges(previous: Fields, changes: FieldChanges): Fields {
  const next: Fields = { ...previous, ...structuredClone(changes.set ?? {}) };
  for (const [key, suffix] of Object.entries(changes.append ?? {})) next[key] = `${String(previous[key] ?? "")}${suffix}`;
  for (const key of changes.unset ?? []) delete next[key];
  return next;
}
