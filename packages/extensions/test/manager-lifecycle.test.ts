// The manager's lifecycle rules against real server processes (the shared fixture server):
// a config changed and changed back starts normally, a server that crashes on every call
// ends quarantined, the first call after an idle server died starts a fresh one unless the
// backoff forbids it, availability has its own typed fields and every counter stays a
// number, a health check stops when the manager shuts down during it, and the heartbeat
// (its own deadline) finds a server frozen with SIGSTOP.
import { describe, expect, it } from "vitest";
import { isAlive, type FixtureOptions, type FixtureWorkspace } from "../../../fixtures/index.ts";
import { McpError } from "../src/errors.ts";
import type { ServerConfig } from "../src/manager.ts";
import { killAfter, managed, waitFor, workspace } from "./support.ts";

function fixture(ws: FixtureWorkspace, tools: string[], options: FixtureOptions = {}, extra: Partial<ServerConfig> = {}): ServerConfig {
  return { ...ws.command({ selfDestructMs: 60_000, ...options }), timeoutMs: 10_000, tools: tools.map((name) => ({ name })), ...extra };
}

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe("manager lifecycle", () => {
  it("a config that changes and changes back (hash A → B → A) starts normally", async () => {
    const ws = workspace();
    const config = fixture(ws, ["echo", "inspect"], {}, { env: { VARIANT: "a" } });
    const manager = managed({ servers: { s: config } });
    const hashA = manager.serverHash("s");
    await expect(manager.callTool("s/echo", { value: "a" })).resolves.toEqual({ content: "a" });
    config.env = { VARIANT: "b" };
    expect(manager.serverHash("s")).not.toBe(hashA);
    await expect(manager.callTool("s/echo", { value: "b" })).resolves.toEqual({ content: "b" });
    config.env = { VARIANT: "a" };
    expect(manager.serverHash("s")).toBe(hashA);
    await expect(manager.callTool("s/echo", { value: "a again" })).resolves.toEqual({ content: "a again" });
    const seen = (await manager.callTool("s/inspect")) as { env: Record<string, string> };
    expect(seen.env.VARIANT).toBe("a");
    expect(manager.report().servers[0]).toMatchObject({ hash: hashA, state: "ready", running: true });
    await waitFor(() => ws.pids().filter(isAlive).length === 1, "only the current server to be running");
  });

  it("a server that starts fine but crashes on every call ends quarantined", async () => {
    const ws = workspace();
    const time = clock();
    const manager = managed({ servers: { s: fixture(ws, ["exit"]) }, maxFailures: 3, backoffInitialMs: 100, now: time.now });
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      await expect(manager.callTool("s/exit", { code: 4 })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT", reason: "process" });
      const { servers } = manager.metrics();
      time.advance(servers.s!.retryInMs ?? 0);
    }
    const refused = (await manager.callTool("s/exit", {}).catch((error: unknown) => error)) as McpError;
    expect(refused).toMatchObject({ code: "MCP_NOT_INITIALIZED", availability: "quarantined", failures: 3 });
    expect(refused.reason).toBeUndefined();
    expect(manager.report().servers[0]).toMatchObject({ state: "quarantined", failures: 3, starts: 3 });
    expect(ws.pids().filter(isAlive)).toEqual([]);
  });

  it("the first call after an idle server died starts a fresh one, unless the backoff forbids it", async () => {
    const ws = workspace();
    const time = clock();
    const manager = managed({ servers: { s: fixture(ws, ["echo"]) }, backoffInitialMs: 500, now: time.now });
    await manager.callTool("s/echo", { value: 1 });
    const [first] = ws.pids();
    process.kill(first!, "SIGKILL");
    await waitFor(() => manager.metrics().servers.s!.state === "backoff", "the manager to notice the exit");
    const early = (await manager.callTool("s/echo", { value: 2 }).catch((error: unknown) => error)) as McpError;
    expect(early).toMatchObject({ code: "MCP_NOT_INITIALIZED", availability: "backoff", retryInMs: 500 });
    time.advance(500);
    await expect(manager.callTool("s/echo", { value: 3 })).resolves.toEqual({ content: 3 });
    expect(ws.pids()).toHaveLength(2);
    expect(manager.metrics().servers.s).toMatchObject({ state: "ready", failures: 1, starts: 2, exits: { "unexpected signal SIGKILL": 1 } });
  });

  it("says backoff and quarantine in typed fields; every report counter is a number", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: fixture(ws, ["echo"], { scenarios: ["crash-on-start"] }) }, maxFailures: 2, backoffInitialMs: 60_000 });
    await expect(manager.callTool("s/echo", { value: 1 })).rejects.toMatchObject({ reason: "process" });
    const backoff = (await manager.callTool("s/echo", { value: 1 }).catch((error: unknown) => error)) as McpError;
    expect(backoff).toMatchObject({ availability: "backoff", failures: 1 });
    expect(backoff.retryInMs).toBeGreaterThan(0);
    expect(backoff.reason).toBeUndefined();
    expect(backoff.report().reason).toBeNull();
    const { calls } = manager.report();
    expect(Object.keys(calls.stopped).sort()).toEqual(["budget", "process", "shutdown", "user"]);
    for (const value of [calls.ok, calls.toolErrors, ...Object.values(calls.stopped), ...Object.values(calls.failed)]) {
      expect(Number.isFinite(value)).toBe(true);
    }
    expect(calls).toMatchObject({ ok: 0, stopped: { process: 1 }, failed: { MCP_NOT_INITIALIZED: 1 } });
  });

  it("a health check stops when the manager shuts down during it", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: fixture(ws, ["echo"], { scenarios: ["hang-initialize"] }) }, healthTimeoutMs: 30_000 });
    const check = manager.healthCheck("s");
    await waitFor(() => ws.pids().length === 1, "the check's server to start");
    await manager.close();
    await expect(check).resolves.toMatchObject({ ok: false, exited: true, error: { code: "CLIENT_CLOSED", reason: "shutdown" } });
    expect(ws.pids().filter(isAlive)).toEqual([]);
  });
});

// A server that answered once, then froze (SIGSTOP) until its heartbeat failed.
async function frozenByHeartbeat(closeTimeoutMs: number) {
  const ws = workspace();
  killAfter(() => ws.pids());
  const manager = managed({
    servers: { s: fixture(ws, ["echo"], {}, { closeTimeoutMs }) },
    heartbeatIntervalMs: 100,
    heartbeatTimeoutMs: 300,
    backoffInitialMs: 60_000,
  });
  await manager.callTool("s/echo", { value: 1 });
  const [pid] = ws.pids();
  process.kill(pid!, "SIGSTOP");
  await waitFor(() => manager.metrics().servers.s!.heartbeatFailures === 1, "the heartbeat to fail");
  return { manager, pid };
}

describe("heartbeat", () => {
  it("finds a server frozen with SIGSTOP: marked unhealthy, closed, counted as a failure", async () => {
    const { manager, pid } = await frozenByHeartbeat(200);
    expect(manager.metrics().servers.s).toMatchObject({ state: "backoff", availability: "backoff", failures: 1 });
    await expect(manager.callTool("s/echo", { value: 2 })).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED", availability: "backoff" });
    await waitFor(() => !isAlive(pid!), "the frozen server to be killed");
  });

  it("waits in close() for a server the heartbeat gave up on, still being stopped", async () => {
    const { manager, pid } = await frozenByHeartbeat(1_000);
    // The frozen server cannot act on SIGTERM: only the SIGKILL after closeTimeoutMs ends it,
    // and close() resolves only once it is gone.
    await manager.close();
    expect(isAlive(pid!)).toBe(false);
    expect(manager.metrics()).toMatchObject({ runningServers: 0 });
  });

  it("pings at once, on its own deadline, after a call timed out", async () => {
    const ws = workspace();
    killAfter(() => ws.pids());
    const manager = managed({
      servers: { s: fixture(ws, ["echo"], {}, { closeTimeoutMs: 200 }) },
      heartbeatIntervalMs: 600_000,
      heartbeatTimeoutMs: 300,
      backoffInitialMs: 60_000,
    });
    await manager.callTool("s/echo", { value: 1 });
    const [pid] = ws.pids();
    process.kill(pid!, "SIGSTOP");
    await expect(manager.callTool("s/echo", { value: 2 }, { timeoutMs: 300 })).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    await waitFor(() => manager.metrics().servers.s!.failures === 1, "the ping after the timeout to fail");
    expect(manager.metrics().servers.s).toMatchObject({ heartbeatFailures: 1, state: "backoff", timeouts: 2 });
    await waitFor(() => !isAlive(pid!), "the frozen server to be killed");
  });
});
