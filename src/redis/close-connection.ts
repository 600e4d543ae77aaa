import type { Redis } from "ioredis";

/**
 * Closes a connection within `timeoutMs`: politely (`QUIT`, after the replies still due) when
 * Redis answers, at once (`disconnect`) when it does not. Why: a `QUIT` to a Redis that is down
 * waits in ioredis's offline queue, and ioredis 6 never settles it, so `close()` would not end.
 */
export async function closeConnection(connection: Redis, timeoutMs: number): Promise<void> {
  if (connection.status !== "ready") {
    connection.disconnect();
    return;
  }
  await settledWithin(connection.quit(), timeoutMs);
  connection.disconnect();
}

/** Resolves when `work` settles or after `timeoutMs`, whichever comes first. */
export async function settledWithin(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([work.then(() => undefined, () => undefined), timeout]);
  clearTimeout(timer);
}
