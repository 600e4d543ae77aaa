import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { OpenAIFixture } from "./openai-fixtures.js";
import { fixtureFrames } from "./openai-fixtures.js";

/** What the server does for one request, in order of arrival. */
export type ReplayStep =
  | {
      kind: "fixture";
      fixture: OpenAIFixture;
      /** Destroys the socket after this many frames (a dropped connection). */
      cutAfter?: number;
      /** Sends this many frames, then keeps the response open until the client leaves. */
      holdAfter?: number;
    }
  | {
      /** Ready-made SSE frames (another provider's recording), with the same options. */
      kind: "frames";
      frames: string[];
      cutAfter?: number;
      holdAfter?: number;
    }
  | { kind: "http-error"; status: number; body: unknown; headers?: Record<string, string> };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: unknown;
  /** Resolves when the client closed the connection before the response was complete. */
  closedByClient: Promise<void>;
  /** Resolves once this many frames have been written (for `holdAfter`). */
  framesSent: Promise<void>;
}

export interface ReplayServer {
  /** Point the SDK here: `http://127.0.0.1:<port>/v1`. */
  baseURL: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A local server that replays recorded streams as SSE, one step per request, over real HTTP, and
 * records the request bodies. It answers whatever path is asked, so any provider's SDK pointed
 * at `baseURL` (or the bare origin) gets the next step.
 */
export async function startReplayServer(steps: ReplayStep[]): Promise<ReplayServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let closeResolve = (): void => {};
      const closedByClient = new Promise<void>((resolve) => (closeResolve = resolve));
      let framesResolve = (): void => {};
      const framesSent = new Promise<void>((resolve) => (framesResolve = resolve));
      response.on("close", () => {
        if (!response.writableFinished) closeResolve();
      });
      requests.push({
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: text === "" ? undefined : (JSON.parse(text) as unknown),
        closedByClient,
        framesSent,
      });
      const step = steps[requests.length - 1];
      if (!step) {
        respondJson(response, 500, { error: { message: "replay server: no step left for this request" } });
        return;
      }
      if (step.kind === "http-error") {
        respondJson(response, step.status, step.body, step.headers);
        return;
      }
      replay(response, step, framesResolve);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function respondJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

function replay(response: ServerResponse, step: Extract<ReplayStep, { kind: "fixture" | "frames" }>, framesSent: () => void): void {
  const frames = step.kind === "frames" ? step.frames : fixtureFrames(step.fixture);
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  response.flushHeaders();
  const limit = step.cutAfter ?? step.holdAfter;
  const sent = limit === undefined ? frames : frames.slice(0, limit);
  if (sent.length === 0) {
    framesSent();
  }
  sent.forEach((frame, index) => {
    const last = index === sent.length - 1;
    response.write(frame, () => {
      if (!last) return;
      framesSent();
      if (step.cutAfter !== undefined) {
        // Give the frames time to reach the client, then drop the connection mid-body.
        setTimeout(() => response.socket?.destroy(), 20);
      }
    });
  });
  if (limit === undefined) response.end();
}
