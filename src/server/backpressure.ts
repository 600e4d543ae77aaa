/**
 * How a client that reads slower than the agent writes is handled. See PROTOCOL.md,
 * "Backpressure".
 */
export interface BackpressureOptions {
  /**
   * While the socket has this many bytes or more unwritten, frames wait in the client's queue
   * (where consecutive `message_update`s are merged) instead of piling up inside `ws`.
   * Contract: positive. Default 64 KiB.
   */
  highWaterMark?: number;
  /**
   * Past this many queued frames the queued events are dropped and the client gets a snapshot
   * once it drains; if acks and errors alone pass it, the client is closed (1008). Default 512.
   */
  maxQueuedFrames?: number;
  /** Same, in bytes of queued JSON. Default 8 MiB. */
  maxQueuedBytes?: number;
  /** Frames larger than this go out as `fragment` frames. Default 1 MiB. */
  maxFrameBytes?: number;
}

/** Per-client counters, for monitoring and for tests that check memory stays bounded. */
export interface ClientStats {
  sentFrames: number;
  sentBytes: number;
  /** Frames waiting in the queue now, and the most there ever were. */
  queuedFrames: number;
  peakQueuedFrames: number;
  queuedBytes: number;
  peakQueuedBytes: number;
  /** `message_update` frames merged into a later one instead of being sent. */
  coalescedUpdates: number;
  /** Times the queue hit its cap and the client was switched to a snapshot. */
  resyncs: number;
  /** Event frames thrown away by a resync (the snapshot that follows covers them). */
  droppedFrames: number;
  snapshotsSent: number;
  /** `bufferedAmount` of the socket now. */
  bufferedAmount: number;
}
