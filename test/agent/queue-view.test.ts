import { describe, expect, it } from "vitest";
import { MessageQueue } from "../../src/streams/message-queue.js";
import { QueueView } from "../../src/agent/queue-view.js";
import type { AgentMessage } from "../../src/types.js";

function lazyQueue() {
  const holder: { queue: MessageQueue | undefined } = { queue: undefined };
  const view = new QueueView(
    () => holder.queue,
    () => (holder.queue ??= new MessageQueue()),
  );
  return { holder, view };
}

const message: AgentMessage = { role: "user", content: "steer", timestamp: 1 };

describe("QueueView", () => {
  it("finds a queue never made empty, and makes nothing to say so", () => {
    const { holder, view } = lazyQueue();
    expect([view.drain("all"), view.peek(), holder.queue]).toStrictEqual([[], [], undefined]);
  });

  it("makes the queue to listen for arrivals, and hears them; drains what the queue holds", () => {
    const { holder, view } = lazyQueue();
    const heard: AgentMessage[] = [];
    view.arrivals.subscribe((arrival) => heard.push(arrival));
    holder.queue!.push(message);
    expect([heard, [...view.peek()], view.drain("one-at-a-time"), [...view.peek()]]).toStrictEqual([[message], [message], [message], []]);
  });
});
