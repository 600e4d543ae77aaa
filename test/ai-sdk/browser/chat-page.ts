// A minimal useChat page, as a team's React front end would be, bundled by chat-page-bundle.ts
// for the browser test. createElement rather than JSX: the repository's tsconfig has no JSX setting.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type UIMessage } from "ai";
import { createElement as h, useState, type FormEvent } from "react";
import { createRoot } from "react-dom/client";

// ?chat=<id>, and for the resume test ?api=<path>&resume (useChat's `resume: true`).
const query = new URLSearchParams(location.search);
const chatId = query.get("chat") ?? "browser-chat";
const api = query.get("api") ?? "/api/chat";
const transport = new DefaultChatTransport<UIMessage>({ api });

function Part({ part }: { part: UIMessage["parts"][number] }) {
  if (part.type === "text") return h("p", { className: "text" }, part.text);
  if (part.type === "reasoning") return h("p", { className: "reasoning" }, part.text);
  if (part.type.startsWith("tool-") && "state" in part) {
    const tool = part as { type: string; state: string; input?: unknown; output?: unknown; errorText?: string };
    return h(
      "div",
      { className: "tool", "data-tool": tool.type.slice("tool-".length), "data-state": tool.state },
      h("b", null, tool.type.slice("tool-".length)),
      h("code", { className: "input" }, JSON.stringify(tool.input ?? null)),
      tool.output === undefined ? null : h("code", { className: "output" }, JSON.stringify(tool.output)),
      tool.errorText === undefined ? null : h("code", { className: "error" }, tool.errorText),
    );
  }
  if (part.type === "data-tool-approval") {
    // rxagent's approval part (AI SDK 5 has none): answered through the chat's commands route.
    const approval = part.data as { toolCallId: string; toolName: string; state: string };
    const answer = (type: "approve" | "deny") =>
      void fetch(`${api}/${chatId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type, toolCallId: approval.toolCallId }) });
    return h(
      "div",
      { className: "approval", "data-state": approval.state },
      `${approval.toolName}: ${approval.state}`,
      approval.state === "waiting" ? h("button", { className: "approve", onClick: () => answer("approve") }, "Approve") : null,
      approval.state === "waiting" ? h("button", { className: "deny", onClick: () => answer("deny") }, "Deny") : null,
    );
  }
  return null;
}

function App() {
  const { messages, sendMessage, stop, status, error } = useChat({ id: chatId, transport, resume: query.has("resume") });
  const [input, setInput] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void sendMessage({ text: input });
    setInput("");
  };
  return h(
    "main",
    null,
    h("h1", null, "useChat → rxagent"),
    h("div", { id: "status", "data-status": status }, status),
    error ? h("div", { id: "error" }, error.message) : null,
    ...messages.map((message) =>
      h("section", { key: message.id, className: `message ${message.role}` }, h("small", null, message.role), ...message.parts.map((part, index) => h(Part, { key: index, part }))),
    ),
    h(
      "form",
      { onSubmit: submit },
      h("input", { id: "input", value: input, onChange: (event: { target: { value: string } }) => setInput(event.target.value) }),
      h("button", { id: "send", type: "submit" }, "Send"),
      h("button", { id: "stop", type: "button", onClick: () => void stop() }, "Stop"),
    ),
  );
}

createRoot(document.getElementById("root") as HTMLElement).render(h(App));
