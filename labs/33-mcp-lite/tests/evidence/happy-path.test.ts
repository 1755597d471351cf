// Evidence test: evidence/happy-path (see common.ts for how all six are built).

import { say } from "../messages.ts";
import { describe, expect, it } from "vitest";
import { expectCleanShutdown, initialize, received, within } from "../support.ts";
import { start, expectValue } from "./common.ts";

describe("evidence/happy-path", () => {
  it("initializes, lists the echo tool, calls it, and close() leaves no process", async () => {
    const h = start();
    const init = await initialize(h);
    expect(init).toMatchObject({ protocolVersion: expect.any(String), serverInfo: { name: "lab33-fixture" } });
    expect(h.client.initialized).toBe(true);

    const tools = await within(h.client.listTools(), "listTools()");
    const echo = tools.find((tool: { name: string }) => tool.name === "echo");
    expect(echo?.inputSchema).toMatchObject({ type: "object" });

    expectValue(await within(h.client.callTool("echo", { value: "ok" }), "callTool(echo)"), { content: "ok" }, "callTool(echo)");
    const log = h.log();
    expect(received(log, "initialize")).toHaveLength(1);
    expect(received(log, "notifications/initialized")).toHaveLength(1);
    expect(typeof h.client.pid).toBe("number");
    await expectCleanShutdown(h, say("基本流程", "happy path"));
  });
});
