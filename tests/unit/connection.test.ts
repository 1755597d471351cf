// One server's connection on its own: lines pushed in as if the server wrote them, a fake
// host that records what the connection tells the client. Nothing is spawned.
import { afterEach, describe, expect, it, vi } from "vitest";
import { emptyMetrics } from "#submission/src/client-metrics.ts";
import { Connection, type ConnectionHost } from "#submission/src/connection.ts";
import type { McpError } from "#submission/src/errors.ts";
import { resolveOptions, type McpClientOptions } from "#submission/src/options.ts";
import { PendingTable } from "#submission/src/pending.ts";
import { EXIT_DRAIN_MS, type ExitInfo } from "#submission/src/server-process.ts";

const expireError = () => new Error("expired");

function setup(options: Partial<McpClientOptions> = {}, capabilities?: Record<string, unknown>) {
  const failed: McpError[] = [];
  const exited: ExitInfo[] = [];
  const host: ConnectionHost = {
    pending: new PendingTable(),
    counters: emptyMetrics(),
    capabilities: () => capabilities,
    failed: (_connection, error) => failed.push(error),
    exited: (_connection, info) => exited.push(info),
  };
  const connection = new Connection(resolveOptions({ executable: "node", ...options }), host);
  const sent: string[] = [];
  vi.spyOn(connection.server, "send").mockImplementation((line) => (sent.push(line), "written"));
  const stopReading = vi.spyOn(connection.server, "stopReading").mockImplementation(() => {});
  const say = (...lines: unknown[]) => connection.receive(Buffer.from(lines.map((l) => `${typeof l === "string" ? l : JSON.stringify(l)}\n`).join("")));
  const open = (id: number, method = "tools/call") => host.pending.open(id, method, { timeoutMs: 10_000, expireError });
  return { connection, host, failed, exited, sent, stopReading, say, open };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("Connection: responses", () => {
  it("settles the request a response names, once, and counts late or unknown ones", async () => {
    const { host, say, open } = setup();
    const call = open(1);
    say({ jsonrpc: "2.0", id: 1, result: { content: "a" } }, { jsonrpc: "2.0", id: 1, result: "again" }, { jsonrpc: "2.0", id: "1", result: "string id" });
    await expect(call).resolves.toEqual({ content: "a" });
    expect([host.counters.responses, host.counters.unknownResponses]).toEqual([1, 2]);
  });

  it("rejects with the server's error, bounded, naming the request", async () => {
    const { host, say, open } = setup();
    const call = open(2);
    say({ jsonrpc: "2.0", id: 2, error: { code: -32000, message: "tool failed", data: "x".repeat(5_000) } }, { jsonrpc: "2.0", id: 9, error: { code: 1, message: "?" } });
    await expect(call).rejects.toMatchObject({
      code: "MCP_ERROR",
      message: "tools/call (id 2): server error -32000: tool failed",
      remoteCode: -32000,
      data: expect.stringMatching(/^\[data omitted/),
      phase: "request",
    });
    expect([host.counters.remoteErrors, host.counters.unknownResponses]).toEqual([1, 1]);
  });
});

describe("Connection: what the server sends unasked", () => {
  it("answers ping, refuses other server requests, and stops answering behind a full pipe", () => {
    const { connection, host, sent, say } = setup();
    say({ jsonrpc: "2.0", id: "p", method: "ping" }, { jsonrpc: "2.0", id: 7, method: "sampling/createMessage" });
    expect(sent.map((l) => JSON.parse(l))).toEqual([
      { jsonrpc: "2.0", id: "p", result: {} },
      { jsonrpc: "2.0", id: 7, error: { code: -32601, message: "Method not found: sampling/createMessage" } },
    ]);
    vi.spyOn(connection.server, "queuedLines", "get").mockReturnValue(31);
    say({ jsonrpc: "2.0", id: 8, method: "ping" });
    vi.spyOn(connection.server, "queuedLines", "get").mockReturnValue(32);
    say({ jsonrpc: "2.0", id: 9, method: "ping" });
    expect(sent).toHaveLength(3);
    expect(host.counters.serverRequests).toBe(4);
  });

  it("passes on negotiated notifications only, and survives a listener that throws", () => {
    const seen: string[] = [];
    const { host, say, open } = setup(
      {
        onNotification: (n) => {
          seen.push(n.method);
          throw new Error("listener bug");
        },
      },
      { logging: {} },
    );
    void open(3).catch(() => {});
    say(
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 3, progress: 1 } },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 4 } },
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    );
    expect(seen).toEqual(["notifications/progress", "notifications/message"]);
    expect([host.counters.notifications, host.counters.ignoredNotifications]).toEqual([2, 2]);
    expect(host.pending.size).toBe(1);
    host.pending.rejectAll(() => new Error("cleanup"));
  });

  it("counts only what the server sends unasked against the budget, never responses", async () => {
    const { failed, say, open } = setup({ maxNotificationsPerSecond: 1 });
    const calls = [1, 2, 3].map((id) => open(id));
    say(...[1, 2, 3].map((id) => ({ jsonrpc: "2.0", id, result: id })));
    await expect(Promise.all(calls)).resolves.toEqual([1, 2, 3]);
    expect(failed).toEqual([]);
  });

  it("calls a server over its unsolicited budget a flood, requests and notifications alike", () => {
    const { failed, host, say } = setup({ maxNotificationsPerSecond: 2 });
    say({ jsonrpc: "2.0", method: "notifications/message" }, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(failed).toEqual([]);
    say({ jsonrpc: "2.0", method: "notifications/message" });
    expect(failed.map((e) => e.message)).toEqual([
      "server broke the protocol: notification flood: more than 2 per second (maxNotificationsPerSecond)",
    ]);
    expect(host.counters.protocolFaults).toBe(1);
  });
});

describe("Connection: faults", () => {
  it("treats an invalid line as a protocol fault: fails once, stops reading, ignores the rest", async () => {
    const { connection, failed, host, stopReading, say, open } = setup();
    const call = open(1);
    say("[1,2,3]", { jsonrpc: "2.0", id: 1, result: "after the fault" }, "also bad");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ code: "MCP_PROTOCOL_ERROR", phase: "transport", message: expect.stringContaining("not a JSON object") });
    expect(connection.failure).toBe(failed[0]);
    expect(stopReading).toHaveBeenCalledTimes(1);
    expect(host.counters.protocolFaults).toBe(1);
    expect(host.pending.has(1)).toBe(true); // the host rejects pending requests, not the connection
    host.pending.rejectAll(() => new Error("cleanup"));
    await expect(call).rejects.toThrow("cleanup");
  });

  it("treats a line over maxLineBytes as a protocol fault whose cause is the framing error", () => {
    const { failed, say } = setup({ maxLineBytes: 16 });
    say("x".repeat(17));
    expect(failed[0]).toMatchObject({ code: "MCP_PROTOCOL_ERROR", cause: expect.objectContaining({ name: "LineTooLongError" }) });
  });

  it("keeps the first failure reason: a noted one, then nothing else replaces it", () => {
    const { connection, failed, host, say } = setup();
    const first = { code: "MCP_TIMEOUT" } as McpError;
    connection.noteFailure(first);
    connection.noteFailure({ code: "MCP_ERROR" } as McpError);
    say("not json");
    expect(connection.failure).toBe(first);
    expect(failed).toEqual([]);

  });

  it("calls a write error a fault only if the server has not exited once the drain grace passed", () => {
    vi.useFakeTimers();
    const { connection, failed } = setup();
    const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
    connection.writeFailed(epipe);
    connection.writeFailed(new Error("second"));
    vi.advanceTimersByTime(EXIT_DRAIN_MS - 1);
    expect(failed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(failed.map((e) => [e.code, e.message, e.cause, e.phase])).toEqual([["MCP_PROTOCOL_ERROR", "server stopped reading its stdin: EPIPE", epipe, "transport"]]);

    const exiting = setup();
    vi.spyOn(exiting.connection.server, "hasExited", "get").mockReturnValue(true);
    exiting.connection.writeFailed(new Error("no code"));
    vi.advanceTimersByTime(EXIT_DRAIN_MS);
    expect(exiting.failed).toEqual([]);
  });

  it("names a write error by its message when it has no code", () => {
    vi.useFakeTimers();
    const { connection, failed } = setup();
    connection.writeFailed(new Error("pipe broke"));
    vi.advanceTimersByTime(EXIT_DRAIN_MS);
    expect(failed[0]?.message).toBe("server stopped reading its stdin: pipe broke");
  });

  it("reports the server's exit once, clearing a pending write-error timer", () => {
    vi.useFakeTimers();
    const { connection, exited, failed } = setup();
    connection.writeFailed(new Error("x"));
    connection.serverExited({ exitCode: 1, signal: null });
    vi.advanceTimersByTime(EXIT_DRAIN_MS);
    expect(exited).toEqual([{ exitCode: 1, signal: null }]);
    expect(failed).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ignores everything once detached", () => {
    vi.useFakeTimers();
    const { connection, exited, failed, host, say } = setup();
    connection.writeFailed(new Error("x"));
    connection.detach();
    expect(vi.getTimerCount()).toBe(0);
    say({ jsonrpc: "2.0", id: 1, result: 1 }, "not json");
    connection.writeFailed(new Error("y"));
    connection.serverExited({ exitCode: 0, signal: null });
    connection.fail({ code: "MCP_ERROR" } as McpError);
    expect([failed, exited, host.counters.unknownResponses, vi.getTimerCount()]).toEqual([[], [], 0, 0]);
  });
});

describe("Connection: its server", () => {
  it("wires the real server's stdout and exit to the connection", async () => {
    const { connection, host, exited } = setup({ executable: "sh", args: ["-c", `echo '{"jsonrpc":"2.0","id":1,"result":"hi"}'; exit 5`] });
    vi.restoreAllMocks(); // the real server this time
    const call = host.pending.open(1, "ping", { timeoutMs: 10_000, expireError });
    await connection.server.start();
    await expect(call).resolves.toBe("hi");
    await vi.waitFor(() => expect(exited).toEqual([{ exitCode: 5, signal: null }]), { timeout: 10_000 });
  });

  it("wires the real server's write errors to the connection", async () => {
    const { connection, failed } = setup({ executable: "sh", args: ["-c", "exec 0<&-; sleep 30"] });
    vi.restoreAllMocks();
    await connection.server.start();
    try {
      await vi.waitFor(
        () => {
          connection.server.send(`${"z".repeat(1024)}\n`);
          expect(failed.map((e) => e.code)).toEqual(["MCP_PROTOCOL_ERROR"]);
        },
        { timeout: 10_000, interval: 20 },
      );
    } finally {
      await connection.server.stop(100);
    }
  });
});
