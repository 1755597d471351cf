// The tool adapter against the fixture server: tools loaded through a real client,
// arguments checked locally before anything is sent. (Pure cases: tests/unit.)

import { describe, expect, it } from "vitest";
import { loadTools } from "../src/tool-adapter.ts";
import { received } from "../../../labs/33-mcp-lite/tests/support.ts";
import { startClient } from "../../../tests/support.ts";

describe("tool adapter against the fixture server", () => {
  it("loads the fixture's tools, validates echo's arguments locally and calls it", async () => {
    const s = startClient();
    await s.client.initialize();
    const { tools, rejected } = await loadTools(s.client, { serverName: "fixture", maxPermission: "execute", permissions: { echo: "read" } });
    expect(rejected).toEqual([]);
    const echo = tools.find((t) => t.name === "fixture/echo")!;
    expect(echo.permission).toBe("read");
    await expect(echo.call({ delay: 5 })).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" }); // value is required
    await expect(echo.call({ value: "hi", delay: -1 })).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    await expect(echo.call({ value: "hi" })).resolves.toEqual({ content: "hi" });
    expect(received(s.ws.log(), "tools/call").map((m) => m.params.arguments)).toEqual([{ value: "hi" }]);
    await s.client.close();
  });
});
