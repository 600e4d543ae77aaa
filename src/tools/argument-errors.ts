/** One failing place in a tool call's arguments. */
export interface ArgumentIssue {
  /** JSON Pointer of the failing value ("/" for the whole object). */
  path: string;
  message: string;
}

/**
 * The error text an invalid call gets, the same for every kind of schema: each failing path with
 * what was expected and what arrived (in `value`, as the validator last saw it), then the
 * arguments as received, so the model can correct itself.
 */
export function invalidArgumentsText(toolName: string, issues: readonly ArgumentIssue[], value: unknown, received: unknown): string {
  const messagesByPath = new Map<string, string[]>();
  for (const issue of issues) {
    const path = issue.path === "" ? "/" : issue.path;
    const messages = messagesByPath.get(path) ?? [];
    if (!messages.includes(issue.message)) messages.push(issue.message);
    messagesByPath.set(path, messages);
  }
  const lines = [...messagesByPath].map(([path, messages]) => {
    const actual = valueAt(value, path);
    const receivedText = actual === undefined ? "missing" : `received ${truncate(JSON.stringify(actual) ?? String(actual))}`;
    return `  - ${path}: ${messages.join("; ")} (${receivedText})`;
  });
  return [`Invalid arguments for tool "${toolName}":`, ...lines, `Received arguments: ${truncate(JSON.stringify(received) ?? String(received))}`].join(
    "\n",
  );
}

/** A JSON Pointer built from path segments. */
export function pointerOf(segments: readonly PropertyKey[]): string {
  return segments.map((segment) => `/${String(segment).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

function valueAt(value: unknown, path: string): unknown {
  let current = value;
  for (const segment of path.split("/").slice(1)) {
    if (segment === "") continue;
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return current;
}

export function truncate(text: string, limit = 500): string {
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length} characters)` : text;
}
