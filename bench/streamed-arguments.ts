// The tool arguments the streamed-arguments benches send (bench/partial-json.ts, the draft alone;
// bench/stream-end-to-end.ts, through the server): the same text, so their figures compare.

/** About 1 MB: a long string and 6,000 small records. */
export function megabyteArguments(): string {
  const records = Array.from({ length: 6000 }, (_unused, index) => ({ id: index, name: `item ${index}`, tags: ["a", "b"], done: index % 2 === 0 }));
  const content = "lorem ipsum dolor sit amet ".repeat(26_000);
  return JSON.stringify({ path: "notes.txt", content, records });
}

/** One small call's arguments; the 10k-calls cases stream it in each call's own block. */
export function smallCallArguments(): string {
  return JSON.stringify({ path: "src/file.ts", line: 42, replace: "const x = 1;" });
}
