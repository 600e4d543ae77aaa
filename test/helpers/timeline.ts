/**
 * A marble diagram and its values built from what happens at absolute frames, so a test reads
 * "at frame 20, these events" instead of counting letters and group widths:
 *
 * ```ts
 * m.expect(run$).toBeObservable(...timeline({ 0: [...opening, ...reply.events], 20: [turnEnd, agentEnd] }));
 * // → ["(abcdefghij) 8ms (kl|)", { a: opening[0], … }]
 * ```
 *
 * The Observable completes with the events of the last frame, unless `ending` is `"open"` (a
 * subscription that is cut short). Several events at one frame become a group; a group of n
 * values takes n + 2 frames, so the next frame must leave room for it.
 */
export function timeline<T>(frames: Readonly<Record<number, readonly T[]>>, ending: "complete" | "open" = "complete"): [string, Record<string, T>] {
  const values: Record<string, T> = {};
  const parts: string[] = [];
  const starts = Object.keys(frames)
    .map(Number)
    .sort((left, right) => left - right);
  let frame = 0;
  let letter = 0;
  starts.forEach((start, index) => {
    if (start < frame) throw new Error(`timeline: frame ${start} comes before the group at the frame before it has ended (frame ${frame})`);
    if (start > frame) parts.push(`${start - frame}ms`);
    const symbols = frames[start]!.map((value) => {
      const symbol = LETTERS[letter++];
      if (symbol === undefined) throw new Error(`timeline: more than ${LETTERS.length} values`);
      values[symbol] = value;
      return symbol;
    });
    const last = index === starts.length - 1 && ending === "complete" ? "|" : "";
    const group = symbols.join("") + last;
    parts.push(group.length === 1 ? group : `(${group})`);
    frame = start + (group.length === 1 ? 1 : group.length + 2);
  });
  return [parts.join(" "), values];
}

const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZαβγδεζηθικλμνξοπρστυφχψω";
