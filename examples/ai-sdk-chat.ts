// An rxagent backend for the AI SDK's useChat, and a client that speaks to it as useChat does
// (its DefaultChatTransport and readUIMessageStream). Run: npx tsx examples/ai-sdk-chat.ts
// (needs `npm i ai`). A React page would call useChat({ id }) with api "/api/chat": docs/ai-sdk.md.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { DefaultChatTransport, getToolName, isToolUIPart, readUIMessageStream, type UIMessage } from "ai";
import { Agent } from "rxagent";
import { createChatHandler, handleNodeRequest } from "rxagent/ai-sdk";
import { demoModel, demoTools } from "rxagent/demo";

// The server: one Agent per chat id, useChat's POST at /api/chat; your own routes beside it.
const chats = createChatHandler({ createAgent: () => new Agent({ model: demoModel({ delay: 1 }), tools: demoTools({ stepDelay: 1 }) }) });
const server = createServer((request, response) => {
  if (!handleNodeRequest(chats, request, response)) response.writeHead(404).end();
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;

// The client: what useChat does for each message it sends.
const transport = new DefaultChatTransport<UIMessage>({ api });
const history: UIMessage[] = [];
async function send(text: string): Promise<UIMessage> {
  history.push({ id: `user-${history.length}`, role: "user", parts: [{ type: "text", text }] });
  const stream = await transport.sendMessages({ chatId: "example-chat", messages: history, trigger: "submit-message", messageId: undefined, abortSignal: undefined });
  let reply: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) reply = message;
  history.push(reply as UIMessage);
  return reply as UIMessage;
}

for (const prompt of ["what is 12*7?", "and what time is it?"]) {
  const reply = await send(prompt);
  console.log(`> ${prompt}`);
  for (const part of reply.parts) {
    if (part.type === "text") console.log(part.text);
    else if (isToolUIPart(part)) console.log(`[${getToolName(part)} ${part.state}] ${JSON.stringify(part.input)}`);
  }
}

await chats.close();
server.close();
