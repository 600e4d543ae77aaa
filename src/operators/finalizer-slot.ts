import type { Subscription } from "rxjs";

// A packed array to slice: `slice` makes a packed copy of exactly the slots it takes.
const UNDEFINED_SLOTS: readonly unknown[] = [undefined, undefined, undefined, undefined];

/** rxjs 7's own field for what a subscription tears down with it (`Subscription.add` fills it). */
interface FinalizerList {
  _finalizers: unknown[] | null;
}

/**
 * Makes room in `subscription` for `count` finalizers (at most four) before anything is added to
 * it: the first `add`s then fill that room, as rxjs's `add` would, without growing a list.
 *
 * Why: rxjs starts the list as `[]` and pushes onto it, and V8 grows an empty array to 17 slots
 * on its first push: 184 bytes with the array, where a list of one is 56 (8 bytes a slot more
 * for each). The loop's subscribers each hold one to four finalizers at a time (counted per
 * class in bench W1, W2 and W5), and a run waiting for its model held six such lists (bench W5,
 * heap per waiting run). Why `pop`: an array made with its elements and emptied keeps
 * their slots; `[]`, and `new Array(1)` or a literal emptied by `length = 0`, do not (measured
 * on Node 20 and 24). One `add` past `count` grows the list as rxjs's would, to 16 slots more
 * than it held. Should rxjs stop using this field, the room is an unused empty array and nothing
 * else changes (test/operators/finalizer-slot.test.ts checks that rxjs fills it).
 */
export function reserveFinalizerSlots(subscription: Subscription, count: number): void {
  const finalizers = subscription as unknown as FinalizerList;
  // Only a list rxjs has not begun (null): one begun holds finalizers already.
  if (finalizers._finalizers !== null) return;
  const list = UNDEFINED_SLOTS.slice(0, count);
  while (list.length > 0) list.pop();
  finalizers._finalizers = list;
}
