import { describe, expect, it } from "vitest";
import { chatBody, chunksOf, finalMessage, postJson } from "../ai-sdk/chat-server.js";
import { RawClient, waitFor } from "../server/helpers.js";
import { demoEnvironment, startCli } from "./cli-process.js";

describe("rxagent serve --ai-sdk", () => {
  it("answers useChat at /api/chat beside the page and its WebSocket, with the demo model and tools", async () => {
    const cli = startCli(["serve", "--ai-sdk", "--port", "0", "--delay", "0"]);
    await cli.waitFor((stdout) => /Serving the web UI at/.test(stdout));
    const endpoint = /useChat endpoint \(AI SDK\): (http:\/\/127\.0\.0\.1:\d+\/api\/chat)/.exec(cli.stdout())?.[1] ?? "";
    const response = await postJson(endpoint, chatBody("cli-chat", "what is 6*7"));
    expect(response.status).toBe(200);
    const message = await finalMessage(await chunksOf(response));
    const calculator = message.parts.find((part) => part.type === "tool-calculator");
    expect(calculator).toMatchObject({ state: "output-available", input: { expression: "6*7" } });
    expect(message.parts.filter((part) => part.type === "text").map((part) => part.text).join(" ")).toMatch(/42/);
    // The page is still there beside it, and its WebSocket runs a session of its own at the same time.
    expect((await fetch(endpoint.replace("api/chat", ""))).status).toBe(200);
    const client = await RawClient.open(endpoint.replace("http:", "ws:").replace("api/chat", "ws"));
    await client.request({ type: "attach", session: "socket-session" });
    await client.request({ type: "prompt", input: "what is 6*7" });
    await waitFor(() => client.hasEvent("agent_end"), "agent_end", 20_000);
    expect(client.agentEvents().find((event) => event.type === "tool_execution_end")).toMatchObject({ toolName: "calculator", isError: false });
    await client.close();
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(0);
  });

  it("with a token, refuses a useChat request without it (401) and takes one with it", async () => {
    const cli = startCli(["serve", "--ai-sdk", "--port", "0", "--delay", "0"], { environment: demoEnvironment({ RXAGENT_TOKEN: "s3cret" }) });
    await cli.waitFor((stdout) => /Serving the web UI at/.test(stdout));
    const endpoint = /useChat endpoint \(AI SDK\): (\S+)/.exec(cli.stdout())?.[1] ?? "";
    const refused = await postJson(endpoint, chatBody("cli-chat", "hi"));
    expect({ status: refused.status, text: await refused.text() }).toStrictEqual({ status: 401, text: "Not authorized." });
    const accepted = await postJson(endpoint, chatBody("cli-chat", "hi"), { headers: { "content-type": "application/json", authorization: "Bearer s3cret" } });
    expect(accepted.status).toBe(200);
    await accepted.text();
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(0);
  });

  it("is refused with another command than serve", async () => {
    const cli = startCli(["chat", "--ai-sdk", "hi"]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toMatch(/--ai-sdk works with serve\./);
  });
});
