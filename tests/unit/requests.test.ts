// The request path on its own: Requests against a fake connection whose server records
// what it was asked to write, so each step of send() and of expiry is checked exactly.
import { afterEach, describe, expect, it, vi } from "vitest";
import { emptyMetrics } from "#submission/src/client-metrics.ts";
import type { Connection } from "#submission/src/connection.ts";
import { McpError } from "#submission/src/errors.ts";
import { resolveOptions } from "#submission/src/options.ts";
import { Requests } from "#submission/src/requests.ts";
import type { SendOptions } from "#submission/src/server-process.ts";

type Outcome = "written" | "queued" | "dropped";

// A server that writes (running the veto first), queues or drops, as the test says.
function fakeConnection(outcome: Outcome = "written", failure?: McpError) {
  const server = {
    lines: [] as string[],
    queued: [] as Array<{ line: string } & SendOptions>,
    notices: [] as string[],
    idle: true,
    discards: 0,
    send(line: string, options: SendOptions = {}): Outcome {
      if (outcome === "queued") {
        this.queued.push({ line, ...options });
        return "queued";
      }
      if (outcome === "dropped" || (options.beforeWrite && !options.beforeWrite())) return "dropped";
      this.lines.push(line);
      return "written";
    },
    // Writes what is queued, as a 'drain' would, each line through its veto.
    drain() {
      for (const entry of this.queued.splice(0)) if (!entry.beforeWrite || entry.beforeWrite()) this.lines.push(entry.line);
    },
    discardUnwanted() {
      this.discards += 1;
      return 0;
    },
    sendIfIdle(line: string) {
      if (this.idle) this.notices.push(line);
      return this.idle;
    },
  };
  return { server, failure };
}

type FakeConnection = ReturnType<typeof fakeConnection>;

function setup(options: Record<string, unknown> = {}, fake: FakeConnection | null = fakeConnection()) {
  const counters = emptyMetrics();
  let current = fake ?? undefined;
  const resolved = resolveOptions({ executable: "node", timeoutMs: 1_000, ...options });
  const requests = new Requests(resolved, counters, () => current as unknown as Connection | undefined);
  return { requests, counters, connection: fake!, swap: (next?: FakeConnection) => (current = next) };
}

const parse = (line: string) => JSON.parse(line) as { id: number; method: string; params: unknown };

afterEach(() => {
  vi.useRealTimers();
});

describe("Requests.send", () => {
  it("writes one encoded request per call, ids counting up from 1, and counts it", () => {
    const { requests, counters, connection } = setup();
    void requests.send("tools/call", { name: "echo", arguments: { value: 1 } }, {}).catch(() => {});
    void requests.send("ping", {}, {}).catch(() => {});
    expect(connection.server.lines.map(parse)).toEqual([
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { value: 1 } } },
      { jsonrpc: "2.0", id: 2, method: "ping", params: {} },
    ]);
    expect(counters.requests).toBe(2);
    expect(requests.pending.get(1)).toMatchObject({ method: "tools/call", written: true });
    requests.pending.rejectAll(() => new Error("cleanup"));
  });

  it("refuses what JSON cannot carry before anything exists, and does not spend an id", async () => {
    const { requests, connection } = setup();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => requests.send("tools/call", circular, {})).toThrow(expect.objectContaining({ code: "MCP_INVALID_ARGUMENT" }));
    expect(requests.pending.size).toBe(0);
    void requests.send("ping", {}, {}).catch(() => {});
    expect(parse(connection.server.lines[0]!).id).toBe(1);
    requests.pending.rejectAll(() => new Error("cleanup"));
  });

  it("refuses a pre-aborted call without registering or writing it", () => {
    const { requests, connection } = setup();
    const controller = new AbortController();
    controller.abort("stop");
    expect(() => requests.send("ping", {}, { signal: controller.signal })).toThrow(
      expect.objectContaining({ code: "MCP_ABORTED", message: "ping: aborted before it was sent: stop" }),
    );
    expect([requests.pending.size, connection.server.lines.length]).toEqual([0, 0]);
  });

  it("refuses a call over maxPending with MCP_BUSY and counts it", () => {
    const { requests, counters } = setup({ maxPending: 2 });
    void requests.send("ping", {}, {}).catch(() => {});
    void requests.send("ping", {}, {}).catch(() => {});
    expect(() => requests.send("ping", {}, {})).toThrow(
      expect.objectContaining({ code: "MCP_BUSY", message: "2 requests already in flight (maxPending)", method: "ping", phase: "request" }),
    );
    expect(counters.busyRejections).toBe(1);
    requests.pending.rejectAll(() => new Error("cleanup"));
  });

  it("refuses a request over maxRequestBytes by its estimated size, and takes one at the limit", () => {
    // params {"v":"xxxx"} is 12 bytes, "ping" quoted 6, plus 64 for the envelope: 82.
    const { requests } = setup({ maxRequestBytes: 82 });
    void requests.send("ping", { v: "xxxx" }, {}).catch(() => {});
    expect(() => requests.send("ping", { v: "xxxxx" }, {})).toThrow(
      expect.objectContaining({
        code: "MCP_INVALID_ARGUMENT",
        message: "ping request is about 83 bytes, over maxRequestBytes (82)",
        phase: "request",
      }),
    );
    requests.pending.rejectAll(() => new Error("cleanup"));
  });

  it("counts multi-byte characters of the params in bytes", () => {
    const { requests } = setup({ maxRequestBytes: 82 });
    expect(() => requests.send("ping", { v: "错错" }, {})).toThrow(/about 84 bytes/); // 6 bytes where "xxxx" had 4
  });

  it("refuses to go past the largest safe id", () => {
    const { requests } = setup();
    (requests as unknown as { nextId: number }).nextId = Number.MAX_SAFE_INTEGER;
    void requests.send("ping", {}, {}).catch(() => {});
    expect(() => requests.send("ping", {}, {})).toThrow(
      expect.objectContaining({ code: "MCP_INVALID_ARGUMENT", message: "request ids exhausted; start a new client", phase: "request" }),
    );
    requests.pending.rejectAll(() => new Error("cleanup"));
  });

  it("says not initialized when no server runs", () => {
    const { requests } = setup({}, null);
    expect(() => requests.send("tools/list", {}, {})).toThrow(expect.objectContaining({ code: "MCP_NOT_INITIALIZED", method: "tools/list" }));
    expect(requests.pending.size).toBe(0);
  });

  it("rejects a request the server's pipe dropped with the connection's failure, when it has one", async () => {
    const failure = new McpError("MCP_PROCESS_EXIT", "server exited (code 1)");
    const { requests } = setup({}, fakeConnection("dropped", failure));
    await expect(requests.send("ping", {}, {})).rejects.toBe(failure);
    expect(requests.pending.size).toBe(0);
  });

  it("rejects a dropped request as not sent while the pipe's failure is not decided", async () => {
    const { requests } = setup({}, fakeConnection("dropped"));
    await expect(requests.send("ping", {}, {})).rejects.toMatchObject({
      code: "MCP_PROTOCOL_ERROR",
      message: "ping (id 1): the server's stdin is closed; the request was not sent",
      outcome: "not-sent",
      phase: "transport",
    });
  });

  it("never writes a queued request that ended before the pipe drained, and lets it leave the queue", async () => {
    vi.useFakeTimers();
    const { requests, connection } = setup({}, fakeConnection("queued"));
    const late = requests.send("tools/call", { name: "a" }, { timeoutMs: 10 });
    const live = requests.send("tools/call", { name: "b" }, {});
    const [first, second] = connection.server.queued;
    expect([first!.stillWanted!(), second!.stillWanted!()]).toEqual([true, true]);
    vi.advanceTimersByTime(10);
    await expect(late).rejects.toMatchObject({ code: "MCP_TIMEOUT", outcome: "not-sent" });
    expect([first!.stillWanted!(), second!.stillWanted!()]).toEqual([false, true]);
    expect(connection.server.discards).toBe(1); // the expired line leaves the queue at once
    connection.server.drain();
    expect(connection.server.lines.map((line) => parse(line).id)).toEqual([2]);
    expect(requests.pending.get(2)?.written).toBe(true);
    requests.pending.settle(2, { ok: true, value: "ok" });
    await expect(live).resolves.toBe("ok");
  });
});

describe("Requests: timeouts and aborts", () => {
  it("times out after the call's own deadline, or the client's, and counts it", async () => {
    vi.useFakeTimers();
    const { requests, counters } = setup({ timeoutMs: 50 });
    const own = requests.send("ping", {}, { timeoutMs: 20 });
    const fallback = requests.send("ping", {}, {});
    vi.advanceTimersByTime(20);
    await expect(own).rejects.toMatchObject({ code: "MCP_TIMEOUT", message: "ping (id 1): timed out after 20 ms", timeoutMs: 20, phase: "request" });
    expect(requests.pending.has(2)).toBe(true);
    vi.advanceTimersByTime(30);
    await expect(fallback).rejects.toMatchObject({ code: "MCP_TIMEOUT", timeoutMs: 50 });
    expect([counters.timeouts, counters.aborts]).toEqual([2, 0]);
  });

  it("rejects an aborted call with the reason as cause, and counts it", async () => {
    const { requests, counters } = setup();
    const controller = new AbortController();
    const call = requests.send("ping", {}, { signal: controller.signal });
    const reason = new Error("user pressed stop");
    controller.abort(reason);
    await expect(call).rejects.toMatchObject({ code: "MCP_ABORTED", message: "ping (id 1): aborted: Error: user pressed stop", cause: reason, phase: "request" });
    expect([counters.timeouts, counters.aborts]).toEqual([0, 1]);
  });

  it("tells the server about a written request the caller gave up on, with the reason", async () => {
    vi.useFakeTimers();
    const { requests, counters, connection } = setup();
    const controller = new AbortController();
    const timedOut = requests.send("tools/call", {}, { timeoutMs: 10 });
    const aborted = requests.send("tools/call", {}, { signal: controller.signal });
    vi.advanceTimersByTime(10);
    controller.abort();
    await expect(timedOut).rejects.toMatchObject({ code: "MCP_TIMEOUT", outcome: "unknown" });
    await expect(aborted).rejects.toMatchObject({ code: "MCP_ABORTED" });
    expect(connection.server.notices.map((line) => JSON.parse(line))).toEqual([
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "timeout" } },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "aborted by the caller" } },
    ]);
    expect(counters.cancellationsSent).toBe(2);
    expect(connection.server.discards).toBe(0);
  });

  it("sends no notice for initialize, for a server that is gone, or while the pipe is full", async () => {
    vi.useFakeTimers();
    const { requests, counters, connection, swap } = setup();
    const init = requests.send("initialize", {}, { timeoutMs: 10 });
    const stale = requests.send("tools/call", {}, { timeoutMs: 20 });
    const busy = requests.send("tools/call", {}, { timeoutMs: 30 });
    vi.advanceTimersByTime(10);
    await expect(init).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    swap(fakeConnection());
    vi.advanceTimersByTime(10);
    await expect(stale).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    swap(connection);
    connection.server.idle = false;
    vi.advanceTimersByTime(10);
    await expect(busy).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    expect(connection.server.notices).toEqual([]);
    expect(counters.cancellationsSent).toBe(0);
  });
});
