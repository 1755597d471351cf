// What the server sends unasked: negotiated notifications, server requests, the byte budget.

import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { McpClient } from "../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { startClient, waitFor } from "../support.ts";

const UNNEGOTIATED_SERVER = fileURLToPath(new URL("./servers/unnegotiated-notifications.mjs", import.meta.url));

describe("server notifications", () => {
  it("passes on progress for a live request and log messages only when logging was negotiated", async () => {
    const seen: string[] = [];
    const s = startClient({ scenarios: ["notifications"] }, { onNotification: (n) => seen.push(n.method) });
    const init = await s.client.initialize();
    expect(init.capabilities).toHaveProperty("logging");
    await expect(s.client.callTool("echo", { value: 1 })).resolves.toEqual({ content: 1 });
    expect(seen).toEqual(["notifications/progress", "notifications/message"]);
    await s.client.close();
  });

  it("ignores notifications the server never negotiated: logging, list_changed, unknown progress tokens", async () => {
    const seen: unknown[] = [];
    const client = new McpClient({
      executable: process.execPath,
      args: [UNNEGOTIATED_SERVER],
      onNotification: (n) => seen.push(n),
    });
    onTestFinished(() => client.close());
    await client.initialize();
    await expect(client.callTool("echo", {})).resolves.toEqual({ content: "done" });
    expect(seen).toEqual([{ method: "notifications/progress", params: { progressToken: 2, progress: 1 } }]);
    expect(client.metrics).toMatchObject({ notifications: 1, ignoredNotifications: 3 });
    await client.close();
  });

  it("answers a server's ping with {} and any other server request with -32601", async () => {
    const s = startClient({ scenarios: ["server-requests"] });
    await s.client.initialize();
    const answered = () => s.ws.log().filter((e) => e.dir === "in" && typeof e.msg?.id === "string").map((e) => e.msg);
    await waitFor(() => answered().length === 2, "the answers to srv-1 and srv-2");
    expect(answered()).toEqual([
      { jsonrpc: "2.0", id: "srv-1", result: {} },
      { jsonrpc: "2.0", id: "srv-2", error: expect.objectContaining({ code: -32601 }) },
    ]);
    expect(s.client.metrics.serverRequests).toBe(2);
    await s.client.close();
  });

  it("stops a server whose notifications exceed maxNotificationBytesPerSecond", async () => {
    const s = startClient({ scenarios: ["notifications"] }, { maxNotificationBytesPerSecond: 200 });
    await s.client.initialize();
    // Four answers in one synchronous burst: eight notifications, about 800 bytes.
    const batch = [1, 2, 3, 4].map((n) => s.client.callTool("echo", { value: n, batch: { id: "b", size: 4 } }));
    const errors = await Promise.all(batch.map((p) => p.then(() => undefined, (e) => e)));
    const fault = errors.find((e) => e !== undefined);
    expect(fault).toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    expect(fault.message).toContain("maxNotificationBytesPerSecond");
    await waitFor(() => s.client.pid === undefined, "the noisy server to be stopped");
    expect(s.client.pendingCount).toBe(0);
    await s.client.close();
  });
});
