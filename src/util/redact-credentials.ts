/**
 * Strings that look like credentials, blanked wherever they occur in a recording or a trace:
 * OpenAI and Anthropic keys (also the masked form OpenAI quotes back in a 401 error), Google API
 * keys, bearer tokens.
 */
const credentialPatterns: RegExp[] = [/\bsk-[A-Za-z0-9_*-]{8,}/g, /\bAIza[0-9A-Za-z_-]{30,}/g, /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi];

export const redactedText = "[redacted]";

/**
 * A copy of a JSON value with every secret and credential-like string replaced by
 * `[redacted]`. Secrets shorter than 4 characters are ignored: blanking them would wreck text.
 */
export function redactCredentials<Value>(value: Value, secrets: readonly string[] = []): Value {
  const usable = secrets.filter((secret) => secret.length >= 4);
  const redact = (text: string): string => {
    let result = text;
    for (const secret of usable) result = result.split(secret).join(redactedText);
    for (const pattern of credentialPatterns) result = result.replace(pattern, (_match, prefix: unknown) => `${typeof prefix === "string" ? prefix : ""}${redactedText}`);
    return result;
  };
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return redact(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === "object") return Object.fromEntries(Object.entries(item).map(([key, field]) => [key, walk(field)]));
    return item;
  };
  return walk(value) as Value;
}
