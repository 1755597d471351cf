// The reference client's request path against the fixture server: admission limits (maxPending,
// maxRequestBytes) and the cancellation notices sent for written calls that time out or are aborted.

import { describe, expect, it, vi } from "vitest";
import { received, sent } from "../../labs/33-mcp-lite/tests/support.ts";
import { failure, startClient, waitFor } from "../support.ts";

const KiB = 1024;

describe("admission limits", () => {
  it("refuses a call past maxPending with MCP_BUSY before any timer or pending entry exists", async () => {
    const s = startClient({}, { maxPending: 2 });
    await s.client.initialize();
    const held = [s.client.callTool("never"), s.client.callTool("never")];
    const settled = held.map((p) => failure(p));
    const timers = vi.spyOn(globalThis, "setTimeout");
    try {
      await expect(s.client.callTool("echo", { value: "third" })).rejects.toMatchObject({ code: "MCP_BUSY" });
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
    expect(s.client.pendingCount).toBe(2);
    expect(s.client.metrics.busyRejections).toBe(1);
    await s.client.close();
    expect((await Promise.all(settled)).map((e) => e.code)).toEqual(["CLIENT_CLOSED", "CLIENT_CLOSED"]);
  });

  it("refuses params over maxRequestBytes with MCP_INVALID_ARGUMENT before an id is taken or a byte written", async () => {
    const s = startClient({}, { maxRequestBytes: 4 * KiB });
    await s.client.initialize();
    const before = s.client.metrics.requests;
    await expect(s.client.callTool("echo", { value: "x".repeat(8 * KiB) })).rejects.toMatchObject({
      code: "MCP_INVALID_ARGUMENT",
    });
    expect(s.client.pendingCount).toBe(0);
    expect(s.client.metrics.requests).toBe(before);
    // The next call gets the next id: the refused one never took one.
    await expect(s.client.callTool("echo", { value: "small" })).resolves.toEqual({ content: "small" });
    const calls = received(s.ws.log(), "tools/call");
    expect(calls).toHaveLength(1);
    expect(calls[0].id).toBe(2);
    await s.client.close();
  });
});

describe("cancellation notices", () => {
  it("sends notifications/cancelled {requestId, reason} on timeout and on abort of a written call", async () => {
    const s = startClient();
    await s.client.initialize();
    const timedOut = await failure(s.client.callTool("never", {}, { timeoutMs: 50 }));
    expect(timedOut).toMatchObject({ code: "MCP_TIMEOUT", timeoutMs: 50, outcome: "unknown" });
    const controller = new AbortController();
    const call = failure(s.client.callTool("never", { tag: "abort-me" }));
    const abortable = s.client.callTool("never", { tag: "abort-me-too" }, { signal: controller.signal });
    await waitFor(() => received(s.ws.log(), "tools/call").length === 3, "the server receiving three calls");
    controller.abort(new Error("stop"));
    expect(await failure(abortable)).toMatchObject({ code: "MCP_ABORTED", outcome: "unknown" });
    await waitFor(() => received(s.ws.log(), "notifications/cancelled").length === 2, "two cancellation notices");
    const notices = received(s.ws.log(), "notifications/cancelled").map((m) => m.params);
    expect(notices).toEqual([
      { requestId: timedOut.requestId, reason: expect.stringContaining("timeout") },
      { requestId: 4, reason: expect.any(String) },
    ]);
    expect(s.client.metrics.cancellationsSent).toBe(2);
    await s.client.close();
    expect(await call).toMatchObject({ code: "CLIENT_CLOSED", outcome: "unknown" });
  });

  it("ignores a result that arrives after the call was aborted, and the client stays healthy", async () => {
    const s = startClient({ scenarios: ["ignore-cancellation"] });
    await s.client.initialize();
    const controller = new AbortController();
    const held = s.client.callTool("echo", { value: "late", after: "go" }, { signal: controller.signal });
    await waitFor(() => received(s.ws.log(), "tools/call").length === 1, "the server receiving the held call");
    controller.abort();
    expect(await failure(held)).toMatchObject({ code: "MCP_ABORTED" });
    await waitFor(() => received(s.ws.log(), "notifications/cancelled").length === 1, "the cancellation notice");
    // Releasing "go" makes the server answer the aborted call too, right after.
    await expect(s.client.callTool("echo", { value: "go" })).resolves.toEqual({ content: "go" });
    await waitFor(() => sent(s.ws.log()).some((m) => m.result?.content === "late"), "the late answer being written");
    await waitFor(() => s.client.metrics.unknownResponses === 1, "the late answer being read and ignored");
    await expect(s.client.callTool("echo", { value: "after" })).resolves.toEqual({ content: "after" });
    expect(s.client.pendingCount).toBe(0);
    await s.client.close();
  });
});
