import { lastValueFrom, throwError, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import type { AssistantMessage, Model } from "../../src/types.js";
import { redactCredentials, redactText } from "../../src/util/redact-credentials.js";

describe("redactText", () => {
  it("blanks known secrets, sk- and AIza keys and bearer tokens, and leaves short secrets and plain text", () => {
    const text = "key my-secret-key, sk-abcdefgh1234, AIza" + "x".repeat(35) + ", Bearer abc.def-12345, id ab";
    expect(redactText(text, ["my-secret-key", "ab"])).toBe("key [redacted], [redacted], [redacted], Bearer [redacted], id ab");
    expect(redactCredentials({ list: ["sk-abcdefgh1234"], count: 1 })).toStrictEqual({ list: ["[redacted]"], count: 1 });
  });
});

describe("a model's error text in the transcript", () => {
  // Any model, not only ours: the loop blanks credential-like strings in errorMessage before the
  // message reaches events, stores and clients (issue 27, row 8).
  it("is blanked when a model's stream fails with an error quoting a key", async () => {
    const model: Model = { id: "m", provider: "p", api: "a", stream: () => throwError(() => new Error("401 from proxy: bad key sk-live-abcdefgh12345678")) };
    const events = await lastValueFrom(agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, { model }).pipe(toArray()));
    const ends = events.flatMap((event) => (event.type === "message_end" && event.message.role === "assistant" ? [(event.message as AssistantMessage).errorMessage] : []));
    expect(ends).toStrictEqual(["Model stream failed: 401 from proxy: bad key [redacted]"]);
  });
});
