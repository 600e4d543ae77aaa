import { describe, expect, it } from "vitest";
import { MessageQueue } from "../../src/streams/message-queue.js";
import { QueueInput } from "../../src/agent/queue-input.js";
import { userMessage } from "../testing/fixtures.js";

describe("QueueInput", () => {
  it("queues what is pushed, with or without its Subject, and lets listeners of the Subject hear pushes", () => {
    const queue = new MessageQueue();
    const input = new QueueInput(queue);
    const [first, second, third] = [userMessage("1"), userMessage("2"), userMessage("3")];
    input.push(first);
    const heard: unknown[] = [];
    input.subject$.subscribe((message) => heard.push(message));
    input.push(second);
    input.subject$.next(third);
    expect(queue.peek()).toStrictEqual([first, second, third]);
    expect(heard).toStrictEqual([second, third]);
  });

  it("queues nothing more once closed", () => {
    const queue = new MessageQueue();
    const input = new QueueInput(queue);
    const subject = input.subject$;
    input.close();
    subject.next(userMessage("late"));
    input.push(userMessage("later"));
    expect(queue.peek()).toStrictEqual([]);
  });
});
