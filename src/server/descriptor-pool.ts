/** What a pool closes when it needs room: a holder of one open file descriptor. */
export interface DescriptorHolder {
  /** Closes the holder's descriptor; it reopens its file when next used. */
  releaseDescriptor(): void;
}

/**
 * Bounds the file descriptors many holders keep open: each holder tells the pool when it uses its
 * descriptor, and when more than `limit` are open the least recently used holder closes its own.
 *
 * Why: a server keeps a transcript file per session, and sessions outnumber what `ulimit -n`
 * allows (256 on some systems): with a descriptor kept per session, appends began to fail with
 * EMFILE from session 236 on, and new sockets were reset (issue 27, row 6). An idle session's file
 * is reopened on its next append, which costs an `open` and an `fstat`.
 */
export class DescriptorPool {
  /** The holders with an open descriptor; Map order is recency order, least recent first. */
  private readonly open = new Map<DescriptorHolder, true>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`DescriptorPool: the limit must be a positive integer, got ${limit}.`);
  }

  /** Marks `holder`'s descriptor as just used (opened or written), closing the least recently used beyond the limit. */
  use(holder: DescriptorHolder): void {
    this.open.delete(holder);
    this.open.set(holder, true);
    for (const oldest of this.open.keys()) {
      if (this.open.size <= this.limit) break;
      this.open.delete(oldest);
      oldest.releaseDescriptor();
    }
  }

  /** `holder` closed its descriptor itself. */
  forget(holder: DescriptorHolder): void {
    this.open.delete(holder);
  }

  /** How many descriptors the pool's holders have open. */
  get size(): number {
    return this.open.size;
  }
}

/** The pool JSONL stores share unless given one: well below the usual `ulimit -n` of 256 or 1024. */
export const sharedDescriptorPool = new DescriptorPool(64);
