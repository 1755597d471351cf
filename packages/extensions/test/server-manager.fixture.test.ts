// The server manager against the fixture server: lazy start, health check, exponential
// backoff driven by an injected clock, quarantine, crash handling without replay, and a
// parent AbortSignal that aborts every call before closing the server.

import { describe, expect, it, onTestFinished } from "vitest";
import { createFixtureWorkspace, isAlive, type FixtureOptions } from "../../../fixtures/index.ts";
import { ServerManager, ServerUnavailableError, type ServerManagerOptions } from "../src/server-manager.ts";
import { McpClient } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { received } from "../../../labs/33-mcp-lite/tests/support.ts";
import { failure, waitFor } from "../../../tests/support.ts";

// A clock the test moves by hand: backoff decisions never depend on real time.
function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

function managed(fixture: FixtureOptions = {}, options: Partial<ServerManagerOptions> = {}) {
  const ws = createFixtureWorkspace("lab33-manager-");
  const clock = manualClock();
  const manager = new ServerManager({
    client: { ...ws.command({ selfDestructMs: 60_000, ...fixture }), timeoutMs: 5_000, closeTimeoutMs: 500 },
    now: clock.now,
    backoffInitialMs: 100,
    backoffFactor: 2,
    backoffMaxMs: 1_000,
    maxFailures: 3,
    ...options,
  });
  onTestFinished(async () => {
    await manager.close().catch(() => {});
    await ws.cleanup();
  });
  return { manager, ws, clock, alive: () => ws.pids().filter(isAlive) };
}

describe("server manager", () => {
  it("starts nothing until first use, then starts once with a health check (initialize + tools/list)", async () => {
    const m = managed();
    expect(m.manager.state).toBe("idle");
    expect(m.ws.pids()).toEqual([]);
    const [a, b] = await Promise.all([
      m.manager.callTool("echo", { value: "a" }),
      m.manager.callTool("echo", { value: "b" }),
    ]);
    expect([a, b]).toEqual([{ content: "a" }, { content: "b" }]);
    expect(m.manager.starts).toBe(1);
    expect(m.ws.pids()).toHaveLength(1);
    const log = m.ws.log().filter((e) => e.dir === "in").map((e) => e.msg.method);
    expect(log.slice(0, 3)).toEqual(["initialize", "notifications/initialized", "tools/list"]);
    expect(m.manager.state).toBe("ready");
  });

  it("can health-check with ping instead of tools/list", async () => {
    const m = managed({}, { healthCheck: "ping" });
    await m.manager.callTool("echo", { value: 1 });
    expect(received(m.ws.log(), "ping")).toHaveLength(1);
    expect(received(m.ws.log(), "tools/list")).toHaveLength(0);
  });

  it("fails calls pending at a crash as outcome unknown, never replays them, and restarts after the backoff", async () => {
    const m = managed();
    await m.manager.callTool("echo", { value: "warm" });
    const firstPid = m.manager.pid!;
    const inFlight = failure(m.manager.callTool("echo", { value: "in flight", after: "never-released" }));
    await waitFor(() => received(m.ws.log(), "tools/call").length === 2, "the in-flight call reaching the server");
    const crash = await failure(m.manager.callTool("exit", { code: 9 }));
    expect(crash).toMatchObject({ code: "MCP_PROCESS_EXIT", exitCode: 9, outcome: "unknown" });
    expect(await inFlight).toMatchObject({ code: "MCP_PROCESS_EXIT", outcome: "unknown" });
    expect(m.manager.failures).toBe(1);
    expect(m.manager.state).toBe("backoff");

    // Within the backoff window: refused at once, nothing spawned.
    const early = await failure(m.manager.callTool("echo", { value: "too soon" }));
    expect(early).toBeInstanceOf(ServerUnavailableError);
    expect(early).toMatchObject({ code: "MCP_NOT_INITIALIZED", availability: "backoff", retryInMs: 100 });
    expect(m.ws.pids()).toHaveLength(1);

    m.clock.advance(100);
    await expect(m.manager.callTool("echo", { value: "again" })).resolves.toEqual({ content: "again" });
    expect(m.manager.pid).not.toBe(firstPid);
    expect(m.manager.failures).toBe(1); // a start alone does not reset the count
    m.clock.advance(60_000);
    expect(m.manager.failures).toBe(0); // sustained health does
    // Nothing was replayed: the server saw "in flight" once, on the first process only.
    const values = received(m.ws.log(), "tools/call").map((c) => c.params.arguments.value);
    expect(values.filter((v) => v === "in flight")).toHaveLength(1);
    expect(values).not.toContain("too soon");
    expect(isAlive(firstPid)).toBe(false);
  });

  it("backs off exponentially on failed starts and quarantines after maxFailures", async () => {
    const m = managed({ scenarios: ["crash-on-start"] });
    const waits: Array<number | undefined> = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const error = await failure(m.manager.callTool("echo", { value: attempt }));
      expect(error).toMatchObject({ code: "MCP_PROCESS_EXIT" });
      const refused = await failure(m.manager.callTool("echo", { value: "refused" }));
      expect(refused).toBeInstanceOf(ServerUnavailableError);
      waits.push(refused.retryInMs);
      if (refused.availability === "backoff") m.clock.advance(refused.retryInMs);
    }
    expect(waits).toEqual([100, 200, undefined]);
    expect(m.manager.state).toBe("quarantined");
    m.clock.advance(60_000);
    await expect(m.manager.callTool("echo", { value: "still no" })).rejects.toMatchObject({ availability: "quarantined", failures: 3 });
    expect(m.manager.starts).toBe(3);
    expect(m.alive()).toEqual([]);

    m.manager.release();
    expect(m.manager.state).toBe("idle");
    await expect(m.manager.callTool("echo", { value: "x" })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    expect(m.manager.starts).toBe(4);
  });

  it("counts a failed health check as a failure and stops that server", async () => {
    const m = managed({ scenarios: ["bad-version"] });
    await expect(m.manager.listTools()).rejects.toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    expect(m.manager.failures).toBe(1);
    expect(m.alive()).toEqual([]);
  });

  it("a parent abort ends every call with MCP_ABORTED through the client, then closes the server", async () => {
    const parent = new AbortController();
    const clients: McpClient[] = [];
    const m = managed({}, { signal: parent.signal, createClient: (o) => (clients[clients.length] = new McpClient(o)) });
    await m.manager.callTool("echo", { value: "warm" });
    const pid = m.manager.pid!;
    const calls = [1, 2, 3].map((n) => failure(m.manager.callTool("never", { n })));
    await waitFor(() => received(m.ws.log(), "tools/call").length === 4, "three held calls");
    expect(m.manager.activeCalls).toBe(3);
    parent.abort(new Error("the agent was cancelled"));
    const errors = await Promise.all(calls);
    expect(errors.map((e) => e.code)).toEqual(["MCP_ABORTED", "MCP_ABORTED", "MCP_ABORTED"]);
    expect(errors[0].message).toContain("the agent was cancelled");
    await m.manager.close();
    expect(isAlive(pid)).toBe(false);
    expect(m.manager.state).toBe("closed");
    expect(m.manager.activeCalls).toBe(0);
    // The aborts went through the client's settle path (counted, cancellation notices written)
    // before close() ran, which would have rejected them with CLIENT_CLOSED instead.
    expect(clients).toHaveLength(1);
    expect(clients[0]!.metrics).toMatchObject({ aborts: 3, cancellationsSent: 3, pending: 0 });
    await expect(m.manager.callTool("echo", { value: 1 })).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
  });

  it("a caller's own signal aborts only that call", async () => {
    const m = managed();
    const mine = new AbortController();
    const other = m.manager.callTool("echo", { value: "other", after: "mine-aborted" });
    const call = failure(m.manager.callTool("never", {}, { signal: mine.signal }));
    await waitFor(() => received(m.ws.log(), "tools/call").length === 2, "both calls at the server");
    mine.abort();
    expect(await call).toMatchObject({ code: "MCP_ABORTED" });
    await expect(m.manager.callTool("echo", { value: "mine-aborted" })).resolves.toEqual({ content: "mine-aborted" });
    await expect(other).resolves.toEqual({ content: "other" });
  });

  it("holds a call's own abort and timeoutMs while its server starts, and starts nothing for a signal already aborted", async () => {
    const m = managed({ scenarios: ["hang-initialize"] });
    const before = new AbortController();
    before.abort("user");
    expect(await failure(m.manager.callTool("echo", { value: 1 }, { signal: before.signal }))).toMatchObject({ code: "MCP_ABORTED", method: "tools/call", outcome: "not-sent" });
    expect(m.manager.state).toBe("idle");
    expect(m.ws.pids()).toEqual([]);
    // The server never answers initialize (the client's own deadline is 5 s): the call's 200 ms end its wait.
    const timed = await failure(m.manager.callTool("echo", { value: 2 }, { timeoutMs: 200 }));
    expect(timed).toMatchObject({ code: "MCP_TIMEOUT", method: "tools/call", outcome: "not-sent", timeoutMs: 200, message: expect.stringContaining("while its server started") });
    const controller = new AbortController();
    const stopped = failure(m.manager.listTools({ signal: controller.signal }));
    await waitFor(() => received(m.ws.log(), "initialize").length === 1, "the initialize request");
    controller.abort("user");
    expect(await stopped).toMatchObject({ code: "MCP_ABORTED", method: "tools/list", outcome: "not-sent" });
    // One start for all three: it goes on for whoever calls next.
    expect(received(m.ws.log(), "initialize")).toHaveLength(1);
  });

  it("close() during a start ends the start and leaves no process", async () => {
    const m = managed({ scenarios: ["hang-initialize"] });
    const call = failure(m.manager.callTool("echo", { value: 1 }));
    await waitFor(() => received(m.ws.log(), "initialize").length === 1, "the initialize request");
    await m.manager.close();
    expect(await call).toMatchObject({ code: "CLIENT_CLOSED" });
    expect(m.alive()).toEqual([]);
  });
});
