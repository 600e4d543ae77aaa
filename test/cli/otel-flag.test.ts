import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { RawClient, waitFor } from "../server/helpers.js";
import { demoEnvironment, startCli } from "./cli-process.js";

interface OtlpTraces {
  resourceSpans: { scopeSpans: { spans: { name: string; parentSpanId?: string; spanId: string }[] }[] }[];
}

/** The `span …` lines of a process's stderr, each as its name and attributes. */
const spanLines = (stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => line.startsWith("span "))
    .map((line) => ({ name: line.split(" ").slice(1, 3).join(" "), attributes: JSON.parse(line.slice(line.indexOf("{"))) as Record<string, unknown> }));

/** A collector on 127.0.0.1: every request's path and body, as it arrives. */
async function startCollector() {
  const requests: { path: string | undefined; contentType: string | undefined; body: string }[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      requests.push({ path: request.url, contentType: request.headers["content-type"], body });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("rxagent chat --otel (a real process on the demo model)", () => {
  it("prints the run's spans on stderr, the chat's output on stdout unchanged", async () => {
    const cli = startCli(["chat", "--json", "--otel", "--delay", "0"]);
    cli.child.stdin.end("what is 12*7\n");
    expect(await cli.exited).toBe(0);
    const spans = cli
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("span "));
    const names = spans.map((line) => line.split(" ").slice(1, 3).join(" "));
    expect(names.filter((name) => name.startsWith("chat "))).toHaveLength(2);
    expect(names.filter((name) => name === "execute_tool calculator")).toHaveLength(1);
    expect(names[names.length - 1]?.startsWith("invoke_agent")).toBe(true);
    const run = spans[spans.length - 1]!;
    const runId = /id=(\w+)/.exec(run)?.[1];
    expect(spans.slice(0, -1).every((line) => line.includes(`parent=${runId}`))).toBe(true);
    expect(cli.events().some((event) => event.type === "agent_end")).toBe(true);
    // The chat is one conversation: every span carries its id.
    const conversations = new Set(spanLines(cli.stderr()).map((span) => span.attributes["gen_ai.conversation.id"]));
    expect([...conversations]).toStrictEqual([expect.stringMatching(/^[0-9a-f-]{36}$/)]);
  });

  it("sends the spans to the collector OTEL_EXPORTER_OTLP_ENDPOINT names, as OTLP/HTTP JSON at /v1/traces, before it exits", async () => {
    const collector = await startCollector();
    try {
      const cli = startCli(["chat", "--json", "--otel", "--delay", "0"], { environment: demoEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }) });
      cli.child.stdin.end("what is 12*7\n");
      expect(await cli.exited).toBe(0);
      expect(cli.stderr().split("\n").filter((line) => line.startsWith("span "))).toStrictEqual([]);
      expect(collector.requests.map((request) => [request.path, request.contentType])).toContainEqual(["/v1/traces", "application/json"]);
      const spans = collector.requests
        .filter((request) => request.path === "/v1/traces")
        .flatMap((request) => (JSON.parse(request.body) as OtlpTraces).resourceSpans)
        .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
      expect(spans.map((span) => span.name.split(" ")[0]).sort()).toStrictEqual(["chat", "chat", "execute_tool", "invoke_agent"]);
      const run = spans.find((span) => span.name.startsWith("invoke_agent"))!;
      expect(spans.filter((span) => span !== run).every((span) => span.parentSpanId === run.spanId)).toBe(true);
    } finally {
      await collector.close();
    }
  });
});

describe("rxagent serve --otel (a real process on the demo model)", () => {
  it("prints each session's runs as spans on stderr, with the session's id as gen_ai.conversation.id", async () => {
    const cli = startCli(["serve", "--otel", "--port", "0", "--delay", "0"]);
    await cli.waitFor((stdout) => /Serving the web UI at/.test(stdout));
    const port = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(cli.stdout())?.[1] ?? "";
    const client = await RawClient.open(`ws://127.0.0.1:${port}/ws`);
    try {
      await client.request({ type: "attach", session: "traced-session" });
      await client.request({ type: "prompt", input: "what is 12*7" });
      await waitFor(() => client.hasEvent("agent_end"), "agent_end");
      const spans = await waitFor(() => {
        const lines = spanLines(cli.stderr());
        return lines.some((span) => span.name.startsWith("invoke_agent")) ? lines : undefined;
      }, "the run's span");
      expect(spans.map((span) => span.name.split(" ")[0]).sort()).toStrictEqual(["chat", "chat", "execute_tool", "invoke_agent"]);
      expect(spans.map((span) => span.attributes["gen_ai.conversation.id"])).toStrictEqual(spans.map(() => "traced-session"));
    } finally {
      await client.close();
      cli.child.kill("SIGINT");
      await cli.exited;
    }
  });
});
