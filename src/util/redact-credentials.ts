/**
 * Strings that look like credentials, blanked wherever they occur: OpenAI and Anthropic keys
 * (also the masked form OpenAI quotes back in a 401 error), Google API keys, bearer tokens.
 */
const credentialPatterns: RegExp[] = [/\bsk-[A-Za-z0-9_*-]{8,}/g, /\bAIza[0-9A-Za-z_-]{30,}/g, /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi];

/** What a blanked credential reads as. */
export const redactedText = "[redacted]";

/**
 * `text` with every secret and credential-like string replaced by `[redacted]`. Secrets shorter
 * than 4 characters are ignored: blanking them would wreck text.
 *
 * Why in a leaf: cassettes blank what they record, and the core and the providers blank a
 * provider's error text before it becomes a message's `errorMessage`, which travels to every
 * client, transcript and `--json` line (some proxies quote the key in a 401).
 * @example redactText("401 bad key sk-abcdefgh1234") // "401 bad key [redacted]"
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let result = text;
  for (const secret of secrets) if (secret.length >= 4) result = result.split(secret).join(redactedText);
  for (const pattern of credentialPatterns) result = result.replace(pattern, (_match, prefix: unknown) => `${typeof prefix === "string" ? prefix : ""}${redactedText}`);
  return result;
}

/** A copy of a JSON value with `redactText` applied to every string in it. */
export function redactCredentials<Value>(value: Value, secrets: readonly string[] = []): Value {
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return redactText(item, secrets);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === "object") return Object.fromEntries(Object.entries(item).map(([key, field]) => [key, walk(field)]));
    return item;
  };
  return walk(value) as Value;
}
