// The reference client's guards beyond the fault battery: admission limits, the bounded
// send queue under backpressure, cancellation notices, negotiated notifications, version
// negotiation and the observability counters.

import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { McpClient } from "../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { received, sent } from "../../labs/33-mcp-lite/tests/support.ts";
import { failure, startClient, waitFor } from "../support.ts";

const KiB = 1024;
const UNNEGOTIATED_SERVER = fileURLToPath(new URL("./servers/unnegotiated-notifications.mjs", import.meta.url));

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

describe("backpressure", () => {
  // A request big enough that stdin.write returns false at once (the pipe's buffer is 16 KiB).
  const bulky = { value: "b".repeat(256 * KiB) };

  it("queues writes while the pipe is full; a queued call that times out or is aborted is never written", async () => {
    const s = startClient({ scenarios: ["stall-stdin"] });
    await s.client.initialize();
    await waitFor(() => s.client.stderr.text.includes("stopped reading stdin"), "the server to stop reading");
    const first = s.client.callTool("echo", bulky);
    const timedOut = s.client.callTool("echo", { value: "queued-timeout" }, { timeoutMs: 50 });
    const controller = new AbortController();
    const aborted = s.client.callTool("echo", { value: "queued-abort" }, { signal: controller.signal });
    const kept = s.client.callTool("echo", { value: "queued-kept" });
    expect(s.client.queuedWrites).toBe(3);

    // The queued call keeps its own deadline and its abort, though nothing was sent yet.
    const late = await failure(timedOut);
    expect(late).toMatchObject({ code: "MCP_TIMEOUT", outcome: "not-sent" });
    controller.abort(new Error("user gave up"));
    expect(await failure(aborted)).toMatchObject({ code: "MCP_ABORTED", outcome: "not-sent" });
    // Settled queued lines leave the queue at once instead of waiting for 'drain'.
    expect(s.client.queuedWrites).toBe(1);

    process.kill(s.client.pid!, "SIGUSR2");
    await expect(first).resolves.toEqual(expect.objectContaining({ content: bulky.value }));
    await expect(kept).resolves.toEqual({ content: "queued-kept" });
    const values = received(s.ws.log(), "tools/call").map((m) => m.params.arguments.value);
    expect(values).not.toContain("queued-timeout");
    expect(values).not.toContain("queued-abort");
    // Neither was written, so neither is worth a cancellation notice.
    expect(received(s.ws.log(), "notifications/cancelled")).toHaveLength(0);
    expect(s.client.pendingCount).toBe(0);
    await s.client.close();
  });

  it("a call waiting for 'drain' settles with MCP_PROCESS_EXIT when the server dies", async () => {
    const s = startClient({ scenarios: ["stall-stdin"] });
    await s.client.initialize();
    await waitFor(() => s.client.stderr.text.includes("stopped reading stdin"), "the server to stop reading");
    const first = s.client.callTool("echo", bulky);
    const queued = s.client.callTool("echo", { value: "waiting for drain" });
    expect(s.client.queuedWrites).toBe(1);
    process.kill(s.client.pid!, "SIGKILL");
    expect(await failure(queued)).toMatchObject({ code: "MCP_PROCESS_EXIT", signal: "SIGKILL", outcome: "not-sent" });
    expect(await failure(first)).toMatchObject({ code: "MCP_PROCESS_EXIT", outcome: "unknown" });
    expect(s.client.queuedWrites).toBe(0);
    expect(s.client.pendingCount).toBe(0);
    await s.client.close();
    expect(s.alive()).toEqual([]);
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

describe("version negotiation", () => {
  it("refuses an unsupported protocol version, names both sides, and stops the child", async () => {
    const s = startClient({ scenarios: ["bad-version"] });
    const error = await failure(s.client.initialize());
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR", phase: "handshake" });
    expect(error.message).toContain("1999-01-01");
    expect(error.message).toContain("2025-06-18");
    expect(s.client.initialized).toBe(false);
    expect(s.client.pid).toBeUndefined();
    expect(s.alive()).toEqual([]);
    await s.client.close();
  });

  it("accepts an older version the server prefers when this client supports it", async () => {
    const s = startClient({ protocolVersions: ["2024-11-05"] });
    await expect(s.client.initialize()).resolves.toMatchObject({ protocolVersion: "2024-11-05" });
    await s.client.close();
  });
});

describe("observability counters", () => {
  it("counts requests, outcomes and the exit reason without recording arguments or results", async () => {
    const s = startClient({ scenarios: ["duplicate-id"] });
    await s.client.initialize();
    const secret = "sk-should-never-appear";
    await s.client.callTool("echo", { value: secret });
    await failure(s.client.callTool("fail", { message: secret }));
    await failure(s.client.callTool("never", {}, { timeoutMs: 30 }));
    const controller = new AbortController();
    const aborted = s.client.callTool("never", {}, { signal: controller.signal });
    controller.abort();
    await failure(aborted);
    await s.client.callTool("echo", { value: "sync" });
    const metrics = s.client.metrics;
    expect(metrics).toMatchObject({
      pending: 0,
      requests: 6, // initialize, echo, fail, never, never, echo
      responses: 3,
      remoteErrors: 1,
      timeouts: 1,
      aborts: 1,
      protocolFaults: 0,
      spawns: 1,
    });
    expect(metrics.unknownResponses).toBeGreaterThanOrEqual(1);
    await s.client.close();
    expect(s.client.metrics.lastExit).toMatchObject({ expected: true });
    expect(JSON.stringify(s.client.metrics)).not.toContain(secret);
  });
});
