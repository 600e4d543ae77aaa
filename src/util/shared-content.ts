/**
 * The content blocks of one streaming message, shared by every snapshot taken of it.
 *
 * Why: each streamed event carries the message as it stood then, and copying the content array
 * for every event made a message of many blocks cost time in the square of their count (10,000
 * small tool calls in one reply: 0.74 s in the draft alone, `npm run bench:partial-json`). A
 * snapshot here costs the blocks that may still change (the open ones, usually one): it keeps
 * the shared array, its length then and those blocks, and builds its `content` array the first
 * time someone reads it (a message of fewer than 128 blocks gets a plain copy: see
 * COPY_BELOW_BLOCKS). A closed block is never changed in place: changing one forks the
 * shared array first, so snapshots taken before keep what they saw.
 *
 * Contract: a snapshot's `content` is a plain array equal, block for block, to the content when
 * the snapshot was taken, whenever it is read; `contentBlockAt` and `contentLength` read it
 * without building the array.
 */
export class SharedContent<Block> {
  private blocks: Block[] = [];
  /** The indices whose block may still change in place, in the order they opened. */
  private readonly open: number[] = [];

  get length(): number {
    return this.blocks.length;
  }

  at(index: number): Block | undefined {
    return this.blocks[index];
  }

  isOpen(index: number): boolean {
    return this.open.includes(index);
  }

  /** The open indices, in ascending order. */
  openIndices(): number[] {
    return this.open.slice().sort((left, right) => left - right);
  }

  /** Adds a block at the end; it stays open (may change) until `close`. */
  push(block: Block): number {
    this.open.push(this.blocks.length);
    return this.blocks.push(block) - 1;
  }

  /** Puts `block` at `index` (an existing index, or the length to add one). */
  set(index: number, block: Block): void {
    if (index >= this.blocks.length) {
      this.blocks[index] = block;
      this.open.push(index);
      return;
    }
    // Snapshots read a closed block from the shared array: give them the old array to keep.
    if (!this.open.includes(index)) this.blocks = this.blocks.slice();
    this.blocks[index] = block;
  }

  /** The block at `index` will not change any more (a later `set` still may, at the cost of a fork). */
  close(index: number): void {
    const position = this.open.indexOf(index);
    if (position >= 0) this.open.splice(position, 1);
  }

  /** Cuts the content to `length` blocks. */
  truncate(length: number): void {
    if (length >= this.blocks.length) return;
    this.blocks = this.blocks.slice(0, length);
    for (let position = this.open.length - 1; position >= 0; position--) if ((this.open[position] as number) >= length) this.open.splice(position, 1);
  }

  /** A plain copy of the content now. */
  toArray(): Block[] {
    return this.blocks.slice();
  }

  /**
   * Sets `message.content` to the content as it stands now, built when first read. The
   * property stays an ordinary enumerable one for readers (spread, JSON, structuredClone and
   * deep equality see a plain array), and becomes a data property once read or assigned.
   */
  snapshotInto<Message extends { content: Block[] }>(message: Message): Message {
    if (this.blocks.length < COPY_BELOW_BLOCKS) {
      message.content = this.blocks.slice();
      return message;
    }
    // A copy, its keys added in the message's order: see addContentTo.
    const copy: Record<string, unknown> = {};
    // `for…in`, no array of keys per event: a message is plain data, its prototype adds no key.
    for (const key in message) {
      if (key === "content") this.addContentTo(copy);
      else copy[key] = (message as Record<string, unknown>)[key];
    }
    return copy as Message;
  }

  /**
   * Adds `content` to `message`, which has none yet: the content as it stands now, built when
   * first read (as `snapshotInto`). For a caller that builds its message key by key, which
   * saves `snapshotInto`'s copy (AssistantMessageDraft, once per streamed event).
   *
   * Why added to a message without the key, not redefined on one that has it: redefining an
   * existing `content` as an accessor turned each snapshot into a dictionary-mode object (V8),
   * about 460 bytes of property table and 5 µs per streamed event; added in order, the accessor
   * (one shared pair) and the fields take the same hidden-class transitions every time.
   */
  addContentTo(message: object): void {
    if (this.blocks.length < COPY_BELOW_BLOCKS) {
      (message as { content?: Block[] }).content = this.blocks.slice();
      return;
    }
    // Flat and of its exact length: an array per pair, in an array grown by `push`, was about
    // 250 bytes a snapshot, a fifth of the heap of 10,000 small calls streamed.
    const open = this.open;
    const overrides: Array<number | Block> = new Array(open.length * 2);
    for (let position = 0; position < open.length; position++) {
      const index = open[position] as number;
      overrides[position * 2] = index;
      overrides[position * 2 + 1] = this.blocks[index] as Block;
    }
    addPendingContent(message, { blocks: this.blocks, length: this.blocks.length, overrides });
  }
}

/** The block at `index` of a message's content, without building a snapshot's array. */
export function contentBlockAt<Block>(message: { content: readonly Block[] }, index: number): Block | undefined {
  const snapshot = pendingSnapshotOf<Block>(message);
  if (snapshot === undefined) return message.content[index];
  if (index >= snapshot.length) return undefined;
  const overrides = snapshot.overrides;
  for (let position = 0; position < overrides.length; position += 2) if (overrides[position] === index) return overrides[position + 1] as Block;
  return snapshot.blocks[index];
}

/** How many blocks a message's content has, without building a snapshot's array. */
export function contentLength(message: { content: readonly unknown[] }): number {
  return pendingSnapshotOf(message)?.length ?? message.content.length;
}

/** True for a SharedContent snapshot whose `content` array has not been built (or set) yet. */
export function isPendingSnapshot(message: object): boolean {
  return pendingSnapshotOf(message) !== undefined;
}

/**
 * A copy of `message` with `changes` applied that keeps a pending snapshot's content unbuilt.
 * Why: a spread reads `content`, which builds the array (the cost the snapshot saves).
 */
export function withMessageFields<Message extends { content: unknown[] }>(message: Message, changes: Partial<Message>): Message {
  const snapshot = pendingSnapshotOf(message);
  if (snapshot === undefined || "content" in changes) return { ...message, ...changes };
  const copy = {} as Record<string, unknown>;
  for (const key of Object.keys(message)) {
    if (key === "content") addPendingContent(copy, snapshot);
    else copy[key] = (message as Record<string, unknown>)[key];
  }
  Object.assign(copy, changes);
  return copy as Message;
}

/**
 * Below this many blocks a snapshot is a plain copy. Why: making the lazy `content` accessor
 * costs about what copying 128 blocks does (1–4 µs per event here, measured at load 2 and 16),
 * and almost every message has a handful of blocks.
 */
const COPY_BELOW_BLOCKS = 128;

interface ContentSnapshot<Block> {
  readonly blocks: readonly Block[];
  readonly length: number;
  /** The open blocks as they stood: index, block, index, block… */
  readonly overrides: ReadonlyArray<number | Block>;
}

/**
 * Returns the object it is given, so that a subclass's private field lands on that object.
 * Why: it is how a plain message gets a private slot (ContentSnapshotSlot) and keeps
 * `Object.prototype` as its prototype.
 */
class ReturnsItsArgument {
  constructor(target: object) {
    return target;
  }
}

/**
 * Where a message keeps its snapshot until `content` is read: a private field, which no reader
 * sees (no key, no symbol; spread, structuredClone and deep equality skip it), cleared once the
 * content is an array of its own. Why not a symbol-keyed property made non-enumerable with
 * `Object.defineProperty`: that call cost about 0.3 µs per streamed event, as much as the rest of
 * the snapshot (10,000 small calls in one reply, `npm run bench:partial-json`); the field costs
 * a property store. Why not a WeakMap: one entry per streamed event cost five times the event's
 * own objects.
 */
class ContentSnapshotSlot extends ReturnsItsArgument {
  #snapshot: ContentSnapshot<unknown> | undefined;

  private constructor(message: object, snapshot: ContentSnapshot<unknown>) {
    super(message);
    this.#snapshot = snapshot;
  }

  static add(message: object, snapshot: ContentSnapshot<unknown>): void {
    new ContentSnapshotSlot(message, snapshot);
  }

  static of(message: object): ContentSnapshot<unknown> | undefined {
    // `in` throws on a primitive, and a provider's event may carry one where a message belongs.
    return typeof message === "object" && message !== null && #snapshot in message ? (message as ContentSnapshotSlot).#snapshot : undefined;
  }

  static clear(message: object): void {
    (message as ContentSnapshotSlot).#snapshot = undefined;
  }
}

// One accessor for every snapshot, so making one allocates no functions.
const CONTENT: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: object): unknown[] {
    const snapshot = ContentSnapshotSlot.of(this) as ContentSnapshot<unknown>;
    const content = snapshot.blocks.slice(0, snapshot.length);
    const overrides = snapshot.overrides;
    for (let position = 0; position < overrides.length; position += 2) content[overrides[position] as number] = overrides[position + 1];
    return settle(this, content);
  },
  set(this: object, content: unknown[]): void {
    settle(this, content);
  },
};

/** Adds `content` to `message` (which has no such key yet) as the snapshot's, built when read. */
function addPendingContent(message: object, snapshot: ContentSnapshot<unknown>): void {
  Object.defineProperty(message, "content", CONTENT);
  ContentSnapshotSlot.add(message, snapshot);
}

function pendingSnapshotOf<Block>(message: object): ContentSnapshot<Block> | undefined {
  return ContentSnapshotSlot.of(message) as ContentSnapshot<Block> | undefined;
}

function settle(message: object, content: unknown[]): unknown[] {
  Object.defineProperty(message, "content", { value: content, enumerable: true, configurable: true, writable: true });
  ContentSnapshotSlot.clear(message);
  return content;
}
