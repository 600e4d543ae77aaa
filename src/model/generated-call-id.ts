const ID_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * A tool-call id for a server that sent none: `call_` and 24 random letters and digits, as
 * OpenAI's look. Why random and not the block's index: every reply's first call was `call_0`,
 * so a run's calls shared ids (one UI part for two calls; providers refuse a conversation that
 * repeats a tool-call id), also across the processes that run a session in turn.
 */
export function generatedCallId(): string {
  const random = crypto.getRandomValues(new Uint8Array(24));
  let id = "call_";
  for (const byte of random) id += ID_CHARACTERS[byte % ID_CHARACTERS.length];
  return id;
}
