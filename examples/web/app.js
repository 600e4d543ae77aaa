// The rxagent page: renders the session's state (transcript, streaming message, tool cards)
// and sends what the user types. Plain DOM, no build step.
import { AgentConnection, textOf } from "/client.js";

const transcript = document.getElementById("transcript");
const input = document.getElementById("input");
const abortButton = document.getElementById("abort");
const laterButton = document.getElementById("later");
const connectionBadge = document.getElementById("connection");
const runStatus = document.getElementById("run-status");
const errorBox = document.getElementById("error");
const modelBadge = document.getElementById("model");

// The session survives reloads of this tab; #session=<id> in the URL picks one explicitly.
// #token=<secret> (what `rxagent serve --token` prints; a fragment never reaches a server log)
// or ?token= carries the server's token.
const fragment = new URLSearchParams(location.hash.slice(1));
const hashSession = fragment.get("session");
const token = fragment.get("token") ?? new URLSearchParams(location.search).get("token") ?? undefined;
const storedSession = sessionStorage.getItem("rxagent-session");
const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
/** Tool results that mean the call was stopped, not that it failed (src/operators/tool-batch.ts, repair-transcript.ts). */
const STOPPED_TOOL_TEXTS = [
  "Tool execution was aborted.",
  "Skipped due to queued user message.",
  "The tool call was interrupted before the tool finished.",
  "Tool call was cancelled",
];
/** Keys of the thinking blocks the user unfolded, so a re-render keeps them open. */
const openDetails = new Set();
let renderScheduled = false;
/** What the server says about itself (`/page.json`): the model that answers, example prompts. */
let pageInfo = {};
/** An example's steering line, typed once its run is busy with a tool. */
let exampleSteer;

const connection = new AgentConnection(wsUrl, {
  session: hashSession ?? storedSession ?? undefined,
  token,
  onChange: () => {
    if (connection.session) sessionStorage.setItem("rxagent-session", connection.session);
    steerExampleWhenBusy();
    scheduleRender();
  },
});
window.rxagent = connection;

fetch("/page.json")
  .then((response) => (response.ok ? response.json() : {}))
  .then((info) => {
    pageInfo = info;
    scheduleRender();
  })
  .catch(() => {});

function steerExampleWhenBusy() {
  if (exampleSteer === undefined || connection.state.pendingToolCalls.length === 0) return;
  const text = exampleSteer;
  exampleSteer = undefined;
  connection.steer(text).catch((error) => {
    connection.lastError ??= { code: "not_sent", message: error.message };
    scheduleRender();
  });
}

function scheduleRender() {
  if (renderScheduled) return;
  renderScheduled = true;
  requestAnimationFrame(() => {
    renderScheduled = false;
    render();
  });
}

function render() {
  const { state, status } = connection;
  connectionBadge.dataset.status = status;
  connectionBadge.querySelector(".label").textContent = status;
  runStatus.dataset.running = String(state.isStreaming);
  runStatus.textContent = runLabel(state);
  abortButton.disabled = !state.isStreaming;
  errorBox.hidden = connection.lastError === undefined;
  errorBox.textContent = connection.lastError ? explain(connection.lastError) : "";
  modelBadge.hidden = pageInfo.model === undefined;
  modelBadge.dataset.demo = String(pageInfo.demo === true);
  modelBadge.textContent = pageInfo.model ?? "";

  const atBottom = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
  const results = new Map();
  for (const message of state.messages) if (message.role === "toolResult") results.set(message.toolCallId, message);
  const messages = state.streamingMessage ? [...state.messages, state.streamingMessage] : state.messages;
  if (messages.length === 0 && connection.queued.length === 0) {
    transcript.replaceChildren(welcome());
    return;
  }
  transcript.replaceChildren(
    ...messages.map((message, index) => renderMessage(message, index, results, message === state.streamingMessage)).filter(Boolean),
    ...connection.queued.map((entry) => element("div", { class: "msg user queued", "data-kind": entry.kind }, element("span", { class: "label" }, entry.kind === "steer" ? "queued · steering" : "queued · follow-up"), entry.text)),
  );
  if (atBottom) transcript.scrollTop = transcript.scrollHeight;
}

/** The empty page: who answers, what to try. */
function welcome() {
  const answering =
    pageInfo.model === undefined
      ? undefined
      : pageInfo.demo
        ? element("p", { class: "answering" }, "Answering: ", element("strong", {}, pageInfo.model), ". It runs offline and understands arithmetic, the time and the files of one folder; for a real model, start rxagent serve with OPENAI_API_KEY (or OPENAI_BASE_URL) set.")
        : element("p", { class: "answering" }, "Answering: ", element("strong", {}, pageInfo.model), ".");
  const examples = (pageInfo.examples ?? []).map((example) =>
    element(
      "button",
      { type: "button", class: "example", title: example.steer === undefined ? example.prompt : `${example.prompt}, then steer: ${example.steer}` },
      element("span", { class: "example-label" }, example.label),
      element("span", { class: "example-prompt" }, example.steer === undefined ? example.prompt : `${example.prompt} → then, while it works: ${example.steer}`),
    ),
  );
  examples.forEach((button, index) => button.addEventListener("click", () => runExample(pageInfo.examples[index])));
  return element(
    "section",
    { class: "welcome" },
    element("h2", {}, "Ask the agent something"),
    answering,
    examples.length > 0 ? element("p", { class: "hint" }, "Try one of these:") : undefined,
    examples.length > 0 ? element("div", { class: "examples" }, ...examples) : undefined,
    element("p", { class: "hint" }, "Enter sends. While the agent works, Enter steers it; Later queues a follow-up; Abort stops the run."),
  );
}

function runExample(example) {
  input.value = example.prompt;
  exampleSteer = example.steer;
  submit(false);
}

/** What the agent does now, for the header. */
function runLabel(state) {
  if (!state.isStreaming) return "idle";
  if (state.pendingToolCalls.length > 0) return "running tools…";
  if ((state.waitingToolCalls ?? []).length > 0) return "waiting for a tool slot…";
  const last = state.streamingMessage?.content.at(-1);
  if (last?.type === "text") return "writing…";
  return "thinking…";
}

/** An error or refusal in words: what happened and what to do. */
function explain(error) {
  if (typeof error.code === "number") return error.message;
  const advice = {
    session_limit: " The server is full; reload the page in a while.",
    rate_limited: " Wait a moment before sending more.",
    unknown_session: " Open the page without #session=… to start a new session.",
  }[error.code] ?? "";
  return `${error.code}: ${error.message}${advice}`;
}

function renderMessage(message, index, results, streaming) {
  if (message.role === "user") {
    const kind = connection.injected.get(message);
    if (kind === undefined) return element("div", { class: "msg user" }, textOf(message.content));
    const label = kind === "steer" ? "steering" : "follow-up";
    return element("div", { class: `msg user ${label}` }, element("span", { class: "label" }, label), textOf(message.content));
  }
  if (message.role !== "assistant") return undefined;
  const blocks = message.content.map((block, blockIndex) => {
    if (block.type === "text") return element("div", { class: "text" }, block.text);
    if (block.type === "thinking") {
      const key = `${index}:${blockIndex}`;
      const details = element("details", { class: "thinking" }, element("summary", {}, "Thinking"), element("div", {}, block.thinking));
      details.open = openDetails.has(key);
      details.addEventListener("toggle", () => (details.open ? openDetails.add(key) : openDetails.delete(key)));
      return details;
    }
    if (block.type === "toolCall") return renderToolCard(block, results.get(block.id));
    return undefined;
  });
  const stop =
    !streaming && (message.stopReason === "aborted" || message.stopReason === "error")
      ? element("div", { class: "stop" }, message.stopReason === "aborted" ? "■ aborted" : `error: ${message.errorMessage ?? "unknown"}`)
      : undefined;
  return element("div", { class: `msg assistant${streaming ? " streaming" : ""}`, "data-stop": message.stopReason }, ...blocks, stop);
}

function renderToolCard(call, resultMessage) {
  const run = connection.toolRuns.get(call.id);
  const result = resultMessage ?? run?.result;
  const isError = resultMessage?.isError ?? run?.isError ?? false;
  const resultText = textOf(result?.content).trim();
  const stopped = isError && STOPPED_TOOL_TEXTS.includes(resultText);
  const cancelled = isError && resultText.startsWith("Tool call was cancelled");
  const awaiting = !result && (connection.state.pendingApprovals ?? []).some((pending) => pending.toolCallId === call.id);
  // Calls of this call's sub-agent that wait for approval: answered here, by their own ids.
  const nestedWaits = result ? [] : (connection.state.pendingApprovals ?? []).filter((pending) => pending.parentToolCallId === call.id);
  const denied = isError && resultText.startsWith("Tool call was denied");
  // Waiting for a concurrency slot (state.waitingToolCalls), or announced and not running yet.
  const waiting = (connection.state.waitingToolCalls ?? []).includes(call.id);
  const running = connection.state.pendingToolCalls.includes(call.id);
  const state = result
    ? cancelled ? "cancelled" : denied ? "denied" : stopped ? "aborted" : isError ? "error" : "done"
    : awaiting ? "awaiting approval" : waiting ? "waiting" : running ? "running" : run ? "waiting" : "pending";
  // A call that started and has not finished can be cancelled; the others go on.
  const cancel =
    run && !result && connection.state.isStreaming
      ? element("button", { type: "button", class: "cancel-tool", "data-tool-call-id": call.id, title: "Cancel this tool call" }, "cancel")
      : undefined;
  const progress = run?.progress && !result ? element("pre", { class: "progress" }, textOf(run.progress.content ?? run.progress)) : undefined;
  return element(
    "div",
    { class: "tool-card", "data-tool": call.name, "data-state": state },
    element("div", { class: "head" }, element("span", {}, `tool · ${call.name}`), element("span", { class: "status" }, state), cancel),
    element("pre", { class: "args" }, JSON.stringify(call.arguments, null, 2)),
    awaiting
      ? element(
          "div",
          { class: "approval" },
          element("button", { type: "button", class: "approve-tool", "data-tool-call-id": call.id }, "Approve"),
          element("button", { type: "button", class: "deny-tool", "data-tool-call-id": call.id }, "Deny"),
        )
      : undefined,
    progress,
    subAgentSteps(run?.steps, nestedWaits, Boolean(result)),
    result ? element("pre", { class: "result" }, textOf(result.content ?? result)) : undefined,
  );
}

/** A sub-agent's steps (`agentTool`), indented by depth; open while it works, folded once it is done. */
function subAgentSteps(steps, nestedWaits, done) {
  if (!steps?.length && nestedWaits.length === 0) return undefined;
  const lines = (steps ?? []).map((step) =>
    element("div", { class: "step", "data-kind": step.kind, style: `margin-left: ${(step.depth - 1) * 16}px` }, `${step.agent} ${step.text}`),
  );
  const waits = nestedWaits.map((pending) =>
    element(
      "div",
      { class: "approval" },
      element("span", {}, `${pending.toolName} ${JSON.stringify(pending.args)} waits for approval`),
      element("button", { type: "button", class: "approve-tool", "data-tool-call-id": pending.toolCallId }, "Approve"),
      element("button", { type: "button", class: "deny-tool", "data-tool-call-id": pending.toolCallId }, "Deny"),
    ),
  );
  const summary = element("summary", {}, `sub-agent · ${steps?.length ?? 0} step${steps?.length === 1 ? "" : "s"}`);
  return element("details", { class: "sub-agent", ...(done ? {} : { open: "" }) }, summary, ...lines, ...waits);
}


function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) node.setAttribute(name, value);
  node.append(...children.filter((child) => child !== undefined && child !== null));
  return node;
}

function submit(asFollowUp) {
  let text = input.value.trim();
  if (text === "") return;
  if (text.startsWith("/later ")) {
    asFollowUp = true;
    text = text.slice("/later ".length).trim();
  }
  const typed = input.value;
  input.value = "";
  connection.lastError = undefined;
  const send = asFollowUp ? connection.followUp(text) : connection.state.isStreaming ? connection.steer(text) : connection.prompt(text);
  send.catch((error) => {
    // Not sent: the typed text comes back rather than vanishing.
    if (input.value === "") input.value = typed;
    connection.lastError ??= { code: "not_sent", message: error.message };
    scheduleRender();
  });
}

document.getElementById("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  submit(false);
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    submit(false);
  }
});
laterButton.addEventListener("click", () => submit(true));
abortButton.addEventListener("click", () => connection.abort().catch(() => scheduleRender()));
// One listener for every card's cancel button: cards are re-rendered, the transcript stays.
transcript.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button.cancel-tool, button.approve-tool, button.deny-tool") : null;
  if (!button) return;
  button.disabled = true;
  const id = button.dataset.toolCallId;
  const answer = button.classList.contains("approve-tool")
    ? connection.approve(id)
    : button.classList.contains("deny-tool")
      ? connection.deny(id, "denied in the page")
      : connection.cancelTool(id, "cancelled in the page");
  answer.catch((error) => {
    connection.lastError ??= { code: "not_sent", message: error.message };
    scheduleRender();
  });
});
render();
