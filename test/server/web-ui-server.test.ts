import { describe, expect, it } from "vitest";
import { serveWebUi } from "../../src/server/index.js";
import { realtimeAgent } from "./helpers.js";

describe("serveWebUi's handleRequest", () => {
  // A route that threw did so inside Node's HTTP parser's callback: an uncaught exception, and
  // one request (whatever made the route throw) ended the process.
  it("answers 500 for a route that throws, tells onWarning, and goes on serving", async () => {
    const warnings: string[] = [];
    const ui = await serveWebUi({
      port: 0,
      heartbeatIntervalMs: 0,
      createAgent: () => realtimeAgent(["ok"]),
      handleRequest: (request, response) => {
        if (request.url === "/throws") throw new Error("the route broke");
        if (request.url !== "/mine") return false;
        response.end("mine");
        return true;
      },
      onWarning: (message) => warnings.push(message),
    });
    try {
      expect((await fetch(new URL("/throws", ui.url))).status).toBe(500);
      expect(warnings).toEqual(["handleRequest failed: the route broke"]);
      expect(await (await fetch(new URL("/mine", ui.url))).text()).toBe("mine");
      expect((await fetch(ui.url)).status).toBe(200);
    } finally {
      await ui.close();
    }
  });
});
