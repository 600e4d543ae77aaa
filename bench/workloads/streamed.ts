import type { ModelEvent } from "../../src/index.js";

/**
 * A reply cut into the pieces a provider streams one after the other: each piece ends with a
 * `toolcall_end`, and the events after the last call's end (`done`) stay in its piece, so the
 * message ends as soon as its last call is complete.
 */
export function streamedPieces(reply: readonly ModelEvent[]): ModelEvent[][] {
  const pieces: ModelEvent[][] = [[]];
  for (const event of reply) {
    pieces[pieces.length - 1]!.push(event);
    if (event.type === "toolcall_end") pieces.push([]);
  }
  const last = pieces.pop()!;
  if (pieces.length === 0) return [last];
  pieces[pieces.length - 1]!.push(...last);
  return pieces;
}

/**
 * Plays a reply's pieces `gapMs` apart on real timers (the first at once), calling `emit` for
 * each event and `end` after the last; returns a function that stops the rest.
 */
export function playPieces(reply: readonly ModelEvent[], gapMs: number, emit: (event: ModelEvent) => void, end: () => void): () => void {
  const pieces = streamedPieces(reply);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let index = 0;
  const next = () => {
    for (const event of pieces[index++]!) emit(event);
    if (index < pieces.length) timer = setTimeout(next, gapMs);
    else end();
  };
  next();
  return () => clearTimeout(timer);
}
