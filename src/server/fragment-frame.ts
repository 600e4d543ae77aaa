/**
 * Splits a frame too large for `maxFrameBytes` into `fragment` frames (PROTOCOL.md,
 * "Fragments"): each carries a piece of the frame's JSON text as a string, the last one says
 * `final`. Clients with a 1 MiB frame limit (Python `websockets`' default) can then take a
 * snapshot of any size. A piece may split a surrogate pair: `JSON.stringify` escapes each half
 * and the receiver's concatenation joins them again.
 */
export function fragmentFrame(json: string, maxFrameBytes: number): string[] {
  if (json.length * 3 <= maxFrameBytes || Buffer.byteLength(json) <= maxFrameBytes) return [json];
  const fragments: string[] = [];
  const budget = maxFrameBytes - 64;
  // Mostly ASCII text costs a byte a character; escapes and non-ASCII cost more, so a piece
  // that comes out too big is halved and tried again.
  let size = Math.max(1, Math.floor(budget / 2));
  for (let start = 0; start < json.length; ) {
    const piece = JSON.stringify(json.slice(start, start + size));
    if (Buffer.byteLength(piece) > budget && size > 1) {
      size = Math.max(1, Math.floor(size / 2));
      continue;
    }
    start += size;
    fragments.push(`{"type":"fragment","data":${piece}${start >= json.length ? ',"final":true' : ""}}`);
  }
  return fragments;
}
