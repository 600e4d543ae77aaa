import type { AgentState } from "../types.js";

/**
 * The id lists of an `AgentState` (`pendingToolCalls`, `waitingToolCalls`), shared between the
 * states of a run once long.
 *
 * Why: every state had its own copy of each list, and every call that started or ended copied
 * (or filtered) the whole list, so a reply of n calls running at once cost n² (10,000 Promise
 * tools: 100 million element copies and filter callbacks, on the agent and again on each client
 * that follows it). A long list is a window `[from, to)` on an array that only grows at its end:
 * appending a call pushes there, removing the oldest or the newest moves an end of the window,
 * and the state's property is an accessor that builds the plain array the first time it is read.
 * Below SHARE_FROM ids a list is a plain array, handled as before (a spread, a filter): most runs
 * never see a long one.
 *
 * Contract: the property reads as a plain array equal, id for id, to the list as it stood when the
 * state was made, whenever it is read (the same array on every read); a state's lists never
 * change afterwards. Removing an id removes every occurrence of it, as `filter` did.
 */

type IdField = "pendingToolCalls" | "waitingToolCalls";

/** An id list as the reducer handles it: a plain array, or a window on a shared run. */
export type Ids = readonly string[] | IdWindow;

/** Below this many ids a list is a plain array (making the accessor costs about what copying this many does). */
const SHARE_FROM = 128;

/** An array of ids that only grows at its end; windows on it share it. */
class IdRun {
  readonly ids: string[] = [];
  private readonly seen = new Set<string>();
  /** The first index whose id came before in the run: windows ending at or before it hold each id once. */
  firstRepeat = Number.POSITIVE_INFINITY;

  constructor(ids: Iterable<string>) {
    for (const id of ids) this.push(id);
  }

  push(id: string): void {
    if (this.seen.has(id)) this.firstRepeat = Math.min(this.firstRepeat, this.ids.length);
    else this.seen.add(id);
    this.ids.push(id);
  }

  /** False when `id` is in no window on this run. */
  mayHold(id: string): boolean {
    return this.seen.has(id);
  }
}

export class IdWindow {
  /** The plain array, built on the first read. */
  private built: readonly string[] | undefined;

  constructor(
    readonly run: IdRun,
    readonly from: number,
    readonly to: number,
  ) {}

  get length(): number {
    return this.to - this.from;
  }

  toArray(): readonly string[] {
    return (this.built ??= this.run.ids.slice(this.from, this.to));
  }
}

function windowOf(ids: readonly string[]): IdWindow {
  const run = new IdRun(ids);
  return new IdWindow(run, 0, run.ids.length);
}

/** `ids` with `id` added at the end. */
export function withId(ids: Ids, id: string): Ids {
  if (!(ids instanceof IdWindow)) return ids.length + 1 < SHARE_FROM ? [...ids, id] : windowOf([...ids, id]);
  // Another window already grew the run past this one's end: this one starts a run of its own.
  if (ids.to !== ids.run.ids.length) return windowOf([...ids.toArray(), id]);
  ids.run.push(id);
  return new IdWindow(ids.run, ids.from, ids.to + 1);
}

/** `ids` without `id` (every occurrence). */
export function withoutId(ids: Ids, id: string): Ids {
  if (!(ids instanceof IdWindow)) return ids.filter((other) => other !== id);
  if (!ids.run.mayHold(id)) return ids;
  const { run, from, to } = ids;
  const once = to <= run.firstRepeat;
  let next: Ids;
  // Calls end in the order they started (results come back in order) or right after they start
  // (a call that waits for a slot or an approval): an end of the window.
  if (once && run.ids[from] === id) next = new IdWindow(run, from + 1, to);
  else if (once && run.ids[to - 1] === id) next = new IdWindow(run, from, to - 1);
  else next = ids.toArray().filter((other) => other !== id);
  if (next instanceof IdWindow && next.length < SHARE_FROM) return next.toArray();
  // The run keeps what its windows left behind: past half of it, the window moves to a run of its own.
  if (next instanceof IdWindow && next.from > 1024 && next.from * 2 > run.ids.length) return windowOf(next.toArray());
  return next.length >= SHARE_FROM && !(next instanceof IdWindow) ? windowOf(next) : next;
}

/** Where a state keeps its shared lists: a property no reader sees (not enumerable, a symbol). */
const SHARED = Symbol("rxagent.sharedIds");

type SharedLists = Partial<Record<IdField, IdWindow>>;
type WithShared = Record<string, unknown> & { [SHARED]?: SharedLists };

/** A state's list as the reducer handles it, without building a shared one's array. */
export function idsOf(state: AgentState, field: IdField): Ids {
  return (state as unknown as WithShared)[SHARED]?.[field] ?? state[field];
}

/** True when `state` holds a shared list (a spread of it would build the list's array). */
export function hasSharedIds(state: AgentState): boolean {
  return (state as unknown as WithShared)[SHARED] !== undefined;
}

/**
 * A copy of `state` with `changes` and the id lists `lists` applied: `{ ...state, ...changes }`,
 * except that shared lists are carried over (a spread would read them, building their arrays).
 */
export function withState(state: AgentState, changes: Partial<AgentState>, lists?: Partial<Record<IdField, Ids>>): AgentState {
  const carried = (state as unknown as WithShared)[SHARED];
  // The common case (short lists, nothing shared): the spread it always was.
  if (carried === undefined && !(lists?.pendingToolCalls instanceof IdWindow) && !(lists?.waitingToolCalls instanceof IdWindow)) {
    return (lists === undefined ? { ...state, ...changes } : { ...state, ...changes, ...lists }) as AgentState;
  }
  let shared: SharedLists | undefined;
  const plain: Record<string, unknown> = { ...changes };
  for (const field of Object.keys(lists ?? {}) as IdField[]) {
    const ids = lists?.[field] as Ids;
    if (ids instanceof IdWindow) (shared ??= {})[field] = ids;
    else plain[field] = ids;
  }
  if (carried === undefined && shared === undefined) return { ...state, ...plain } as AgentState;
  const next: WithShared = {};
  for (const key of Object.keys(state)) {
    if (Object.hasOwn(plain, key) || (shared !== undefined && Object.hasOwn(shared, key))) next[key] = plain[key];
    else if (carried !== undefined && Object.hasOwn(carried, key)) {
      (shared ??= {})[key as IdField] ??= carried[key as IdField];
      // Keeps the key's place, as a spread does; the shared list is defined over it below.
      next[key] = undefined;
    } else next[key] = (state as unknown as WithShared)[key];
  }
  for (const key of Object.keys(plain)) if (!Object.hasOwn(next, key)) next[key] = plain[key];
  if (shared !== undefined) {
    Object.defineProperty(next, SHARED, { value: shared });
    for (const field of Object.keys(shared) as IdField[]) Object.defineProperty(next, field, LIST[field]);
  }
  return next as unknown as AgentState;
}

function listAccessor(field: IdField): PropertyDescriptor {
  return {
    enumerable: true,
    configurable: true,
    get(this: WithShared): readonly string[] {
      return (this[SHARED]?.[field] as IdWindow).toArray();
    },
    // An assignment (the state is not frozen) makes it an ordinary property again.
    set(this: WithShared, value: unknown): void {
      delete this[SHARED]?.[field];
      Object.defineProperty(this, field, { value, enumerable: true, configurable: true, writable: true });
    },
  };
}

// One accessor per field for every state, so a state allocates no functions.
const LIST: Record<IdField, PropertyDescriptor> = { pendingToolCalls: listAccessor("pendingToolCalls"), waitingToolCalls: listAccessor("waitingToolCalls") };
