import { describe, expect, it } from "vitest";
import { FRESH_PROCESS_TIMEOUT_MS, sourceUrl } from "../helpers/fresh-process.js";
import { runWithHiddenClassProbe } from "../helpers/hidden-classes.js";

describe("MessageDeltaDecoder", () => {
  it(
    "gives the events it decodes one hidden class, also once optimized (a client decodes one per frame)",
    () => {
      const result = runWithHiddenClassProbe(
        `const { MessageDeltaEncoder } = await import(${sourceUrl("protocol/message-delta.ts")});
const { MessageDeltaDecoder } = await import(${sourceUrl("protocol/message-delta-decoder.ts")});
const { emptyUsage } = await import(${sourceUrl("types/messages.ts")});
const base = { role: "assistant", content: [], api: "a", provider: "p", model: "m", usage: emptyUsage(), stopReason: "stop", timestamp: 1 };
// Text deltas as a server sends them, each through JSON as a client reads it.
const encoder = new MessageDeltaEncoder();
encoder.encode({ type: "message_start", message: base });
const frames: string[] = [];
let message = { ...base, content: [{ type: "text", text: "" }] };
let text = "";
for (let index = 0; index < 200; index++) {
  const event = index === 0 ? { type: "text_start", contentIndex: 0, partial: message } : { type: "text_delta", contentIndex: 0, delta: " w", partial: message };
  frames.push(JSON.stringify({ ...encoder.encode({ type: "message_update", message, assistantMessageEvent: event }), seq: index + 1 }));
  text += " w";
  message = { ...base, content: [{ type: "text", text }] };
}
const decoder = new MessageDeltaDecoder();
decoder.observe({ type: "message_start", message: JSON.parse(JSON.stringify(base)) });
let next = 0;
const decoded: object[] = [];
const decodeSome = () => { for (let count = 0; count < 40; count++) decoded.push(decoder.decode(JSON.parse(frames[next++]!)).assistantMessageEvent); };
optimizeNow(MessageDeltaDecoder.prototype.decode, decodeSome);
const [first, second] = decoded.slice(-2);
console.log(JSON.stringify({ keys: Object.keys(second!), sameHiddenClass: sameHiddenClass(first!, second!) }));
`,
      );
      expect(result.stderr).toBe("");
      expect(JSON.parse(result.stdout)).toEqual({ keys: ["type", "contentIndex", "delta", "partial"], sameHiddenClass: true });
    },
    FRESH_PROCESS_TIMEOUT_MS,
  );
});
