// The tool arguments the streamed-arguments benches send (bench/partial-json.ts, the draft alone;
// bench/stream-end-to-end.ts and bench/tool-calls-end-to-end.ts, through the server), and the
// model that streams them: the same text and the same stream, so their figures compare.
import { Observable } from "rxjs";
import { AssistantMessageDraft } from "../src/model/assistant-message-draft.js";
import type { Model, ModelEvent } from "../src/types.js";

/** About 1 MB: a long string and 6,000 small records. */
export function megabyteArguments(): string {
  return argumentsOfMegabytes(1);
}

/** About `megabytes` MB, shaped as `megabyteArguments`: a longer string and more records. */
export function argumentsOfMegabytes(megabytes: number): string {
  const records = Array.from({ length: 6000 * megabytes }, (_unused, index) => ({ id: index, name: `item ${index}`, tags: ["a", "b"], done: index % 2 === 0 }));
  const content = "lorem ipsum dolor sit amet ".repeat(26_000 * megabytes);
  return JSON.stringify({ path: "notes.txt", content, records });
}

/** One small call's arguments; the 10k-calls cases stream it in each call's own block. */
export function smallCallArguments(): string {
  return JSON.stringify({ path: "src/file.ts", line: 42, replace: "const x = 1;" });
}

const EVENTS_PER_BATCH = 16;

/**
 * The first call streams `calls` tool calls of `text` in `delta`-sized fragments through
 * `AssistantMessageDraft`, 16 events per turn of the event loop (as a provider reading network
 * chunks), calling `sample` before each batch; the second call answers "done".
 */
export function streamingModel(text: string, delta: number, calls: number, sample: () => void): Model {
  let callIndex = 0;
  return {
    id: "bench",
    provider: "bench",
    api: "bench",
    stream: () =>
      new Observable<ModelEvent>((subscriber) => {
        const first = callIndex++ === 0;
        const draft = new AssistantMessageDraft({ api: "bench", provider: "bench", model: "bench", timestamp: 0 });
        function* events(): Generator<ModelEvent> {
          yield* draft.start();
          if (!first) {
            const { index, events: opened } = draft.openText();
            yield* opened;
            yield* draft.appendText(index, "done");
            yield* draft.finish("stop");
            return;
          }
          for (let call = 0; call < calls; call++) {
            const { index, events: opened } = draft.openToolCall(`call_${call}`, "write_file");
            yield* opened;
            // Each fragment its own string, as a provider's JSON.parse of a network chunk makes it:
            // a slice would share the bench's text, which the heap figures do not count.
            for (let offset = 0; offset < text.length; offset += delta) yield* draft.appendToolArguments(index, JSON.parse(JSON.stringify(text.slice(offset, offset + delta))) as string);
            yield* draft.close(index);
          }
          yield* draft.finish("toolUse");
        }
        const source = events();
        let timer: NodeJS.Immediate | undefined;
        const batch = (): void => {
          sample();
          for (let count = 0; count < EVENTS_PER_BATCH; count++) {
            const next = source.next();
            if (next.done === true) return subscriber.complete();
            subscriber.next(next.value);
          }
          timer = setImmediate(batch);
        };
        timer = setImmediate(batch);
        return () => clearImmediate(timer);
      }),
  };
}
