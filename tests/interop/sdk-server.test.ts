// Interop: the reference client against a server built with the official MCP SDK.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { McpClient } from "#submission/src/mcp-client.ts";
import { isAlive } from "../../fixtures/index.ts";
import { rejection, within } from "../../labs/33-mcp-lite/tests/support.ts";

const SDK_SERVER = join(import.meta.dirname, "sdk-server.mjs");

describe("the reference client and an official-SDK server", () => {
  it("completes initialize → tools/list → tools/call, survives a tool error, and closes cleanly", async () => {
    const client = new McpClient({ executable: process.execPath, args: [SDK_SERVER], timeoutMs: 10_000 });
    try {
      const init = await within(client.initialize(), "initialize()", 10_000);
      expect(init).toMatchObject({ serverInfo: { name: "lab33-sdk-interop" }, capabilities: { tools: {} } });
      expect(["2025-06-18", "2025-03-26", "2024-11-05"]).toContain(init.protocolVersion);

      const tools = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["echo", "add", "boom"]);

      const [echo, sum] = await Promise.all([client.callTool("echo", { value: "你好" }), client.callTool("add", { a: 2, b: 40 })]);
      expect(echo).toEqual({ content: [{ type: "text", text: "你好" }] });
      expect(sum).toEqual({ content: [{ type: "text", text: "42" }] });

      const error = await rejection(client.callTool("boom"), "callTool(boom)");
      // The low-level SDK Server turns a thrown McpError into a JSON-RPC error response.
      expect(error).toMatchObject({ code: "MCP_ERROR", remoteCode: -32602, data: { hint: "expected" } });
      expect(error.message).toContain("boom on purpose");
      expect(client.initialized).toBe(true);
      await expect(client.ping()).resolves.toBeUndefined();
      expect(client.metrics.protocolFaults).toBe(0);
    } finally {
      const pid = client.pid;
      await client.close();
      if (pid !== undefined) expect(isAlive(pid)).toBe(false);
    }
  });
});
