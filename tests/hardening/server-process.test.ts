// The server process's bounded send queue under backpressure: a stalled server's full pipe.

import { describe, expect, it } from "vitest";
import { received } from "../../labs/33-mcp-lite/tests/support.ts";
import { failure, startClient, waitFor } from "../support.ts";

const KiB = 1024;

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
