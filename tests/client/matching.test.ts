import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { isAlive } from "../../fixtures/index.ts";
import { liveClientTimers, received, rejection, sent, within } from "../../labs/33-mcp-lite/tests/support.ts";
import { startClient, waitFor } from "../support.ts";

describe("ids and matching", () => {
  it("numbers requests with strictly increasing integers", async () => {
    const h = startClient();
    await h.client.initialize();
    await h.client.listTools();
    await Promise.all([1, 2, 3].map((value) => h.client.callTool("echo", { value })));
    const ids = h.log().filter((e) => e.dir === "in" && "id" in e.msg).map((e) => e.msg.id);
    // One pipe: the server receives lines in the order the client wrote them.
    expect(ids).toEqual([1, 2, 3, 4, 5]);
  });

  it("answers twenty calls to one tool in a server-chosen order, each with its own result", async () => {
    const h = startClient();
    await h.client.initialize();
    const values = Array.from({ length: 20 }, (_, i) => `v${i}`);
    const results = await within(
      Promise.all(values.map((value) => h.client.callTool("echo", { value, batch: { id: "b", size: 20, order: "shuffle", seed: 7 } }))),
      "20 batched calls",
    );
    expect(results).toEqual(values.map((value) => ({ content: value })));
    const answerOrder = sent(h.log()).filter((m) => typeof m.result?.content === "string").map((m) => m.result.content);
    expect(answerOrder).not.toEqual(values); // the fixture really did reorder them
  });

  it('never settles a request with a string id ("3" is not 3)', async () => {
    const h = startClient({ scenarios: ["string-id"] });
    await h.client.initialize();
    await expect(h.client.callTool("echo", { value: "right" })).resolves.toEqual({ content: "right" });
    expect(h.client.metrics.unknownResponses).toBe(1);
  });

  it("ignores responses to ids it never sent", async () => {
    const h = startClient({ scenarios: ["unknown-id"] });
    await h.client.initialize();
    await expect(h.client.callTool("echo", { value: "mine" })).resolves.toEqual({ content: "mine" });
    expect(h.client.metrics.unknownResponses).toBe(1);
  });

  it("passes server notifications on without letting them settle a request", async () => {
    const seen: string[] = [];
    const h = startClient({ scenarios: ["notifications"] }, { onNotification: (n) => seen.push(n.method) });
    await h.client.initialize();
    await expect(h.client.callTool("echo", { value: 1 })).resolves.toEqual({ content: 1 });
    expect(seen).toEqual(["notifications/progress", "notifications/message"]);
  });

  it("answers a server ping and refuses other server requests with -32601", async () => {
    const h = startClient({ scenarios: ["server-requests"] });
    await h.client.initialize();
    await waitFor(() => h.log().filter((e) => e.dir === "in" && typeof e.msg.id === "string").length === 2, "the client's answers");
    const answers = h.log().filter((e) => e.dir === "in" && typeof e.msg.id === "string").map((e) => e.msg);
    expect(answers).toEqual([
      { jsonrpc: "2.0", id: "srv-1", result: {} },
      { jsonrpc: "2.0", id: "srv-2", error: { code: -32601, message: "Method not found: sampling/createMessage" } },
    ]);
    await expect(h.client.callTool("echo", { value: "ok" })).resolves.toEqual({ content: "ok" });
  });

  it("refuses the call beyond maxPending with MCP_BUSY and starts no timer for it", async () => {
    const h = startClient({}, { maxPending: 2 });
    await h.client.initialize();
    const a = rejection(h.client.callTool("never"), "never #1");
    const b = rejection(h.client.callTool("never"), "never #2");
    const timersBefore = liveClientTimers().length;
    await expect(h.client.callTool("echo", { value: 1 })).rejects.toMatchObject({ code: "MCP_BUSY" });
    expect(liveClientTimers().length).toBe(timersBefore);
    expect(h.client.pendingCount).toBe(2);
    await h.client.close();
    expect(await a).toMatchObject({ code: "CLIENT_CLOSED" });
    expect(await b).toMatchObject({ code: "CLIENT_CLOSED" });
  });

  it("matches 100 calls with random server delays and leaves nothing behind", async () => {
    const h = startClient();
    await h.client.initialize();
    const controller = new AbortController();
    let seed = 33;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const calls = Array.from({ length: 100 }, (_, i) =>
      h.client.callTool("echo", { value: { i }, delay: Math.floor(random() * 30) }, { signal: controller.signal }),
    );
    const results = await within(Promise.all(calls), "100 calls", 10_000);
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => ({ content: { i } })));
    expect(h.client.pendingCount).toBe(0);
    expect(liveClientTimers(h.timersBefore)).toEqual([]);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});

describe("protocol faults", () => {
  it.each(["non-object", "result-and-error", "neither", "bad-jsonrpc", "stdout-pollution"])(
    "rejects every pending call with MCP_PROTOCOL_ERROR on %s and stops the server",
    async (scenario) => {
      const h = startClient({ scenarios: [scenario] });
      await h.client.initialize();
      const pid = h.client.pid!;
      const bystander = rejection(h.client.callTool("never"), "the bystander call");
      const error = await rejection(h.client.callTool("echo", { value: "x" }), "the faulty call");
      expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
      expect(await bystander).toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
      expect(h.client.initialized).toBe(false);
      expect(h.client.pendingCount).toBe(0);
      await waitFor(() => !isAlive(pid), "the faulty server to be stopped");
      // A fresh handshake starts a new, healthy server (here: healthy until the next fault).
      await h.client.initialize();
      expect(h.client.pid).not.toBe(pid);
    },
  );

  it("fails fast on a line longer than maxLineBytes, keeping the cause", async () => {
    const h = startClient({ scenarios: ["oversized"], floodBytes: 4 * 1024 * 1024 }, { maxLineBytes: 64 * 1024 });
    await h.client.initialize();
    const error = await rejection(h.client.callTool("echo", { value: "x" }), "the oversized answer");
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR", cause: { name: "LineTooLongError", limitBytes: 64 * 1024 } });
  });

  it("rejects pending calls with MCP_PROCESS_EXIT when the server dies mid-line", async () => {
    const h = startClient({ scenarios: ["half-line-exit"] });
    await h.client.initialize();
    const error = await rejection(h.client.callTool("echo", { value: "x" }), "the call");
    expect(error).toMatchObject({ code: "MCP_PROCESS_EXIT", exitCode: 3 });
  });

  it("treats a server that stopped reading stdin as broken", async () => {
    const h = startClient({ scenarios: ["stdin-close"] });
    await h.client.initialize();
    const error = await rejection(h.client.callTool("echo", { value: "x" }), "the call");
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR", message: expect.stringContaining("stopped reading its stdin") });
    await waitFor(() => h.pids().every((pid) => !isAlive(pid)), "the server to be stopped");
  });

  it("keeps only a bounded stderr tail and marks it truncated", async () => {
    const h = startClient({ scenarios: ["stderr-flood"], floodBytes: 2 * 1024 * 1024 }, { maxStderrBytes: 1024 });
    await h.client.initialize();
    await waitFor(() => h.client.stderr.text.includes("FLOOD-END"), "the end of the flood");
    expect(Buffer.byteLength(h.client.stderr.text)).toBeLessThanOrEqual(1024);
    expect(h.client.stderr.truncated).toBe(true);
    await expect(h.client.callTool("echo", { value: "alive" })).resolves.toEqual({ content: "alive" });
  });

  it("stops a server that floods notifications", async () => {
    const h = startClient({ scenarios: ["notification-flood"] }, { maxNotificationsPerSecond: 500 });
    await h.client.initialize();
    await waitFor(() => h.client.metrics.protocolFaults === 1, "the flood to be refused");
    expect(h.client.initialized).toBe(false);
    await waitFor(() => h.pids().every((pid) => !isAlive(pid)), "the server to be stopped");
  });
});

describe("cancellation", () => {
  it("tells the server about a timed-out request and never writes it again", async () => {
    const h = startClient();
    await h.client.initialize();
    await expect(h.client.callTool("never", {}, { timeoutMs: 50 })).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    await waitFor(() => received(h.log(), "notifications/cancelled").length === 1, "the cancellation notice");
    const [notice] = received(h.log(), "notifications/cancelled");
    const [call] = received(h.log(), "tools/call");
    expect(notice.params).toEqual({ requestId: call.id, reason: "timeout" });
  });
});
