// stopServer(name): one server of a running manager stopped, with close()'s guarantees for
// that server (its calls in flight rejected with the stop's reason, every process of it gone
// when the promise resolves), while the other servers keep running. A stop is deliberate, not
// a failure: no failure counted, no backoff; the next call starts a fresh process (after the
// stop has finished, so two processes of one server never overlap); a server backing off or
// quarantined stays so.
import { describe, expect, it } from "vitest";
import { received } from "../../../labs/33-mcp-lite/tests/support.ts";
import { isAlive, type FixtureOptions, type FixtureWorkspace } from "../../../fixtures/index.ts";
import { McpCancel } from "../src/errors.ts";
import type { McpManagerOptions, McpManagerTraceEvent, ServerConfig } from "../src/manager.ts";
import { managed, waitFor, workspace } from "./support.ts";

function fixture(ws: FixtureWorkspace, tools: string[], options: FixtureOptions = {}): ServerConfig {
  return { ...ws.command({ selfDestructMs: 60_000, ...options }), timeoutMs: 10_000, tools: tools.map((name) => ({ name })) };
}

// Resolves once the fixture server received a tools/call of `tool` (the call is in flight).
function inFlight(ws: FixtureWorkspace, tool: string): Promise<void> {
  return waitFor(() => received(ws.log(), "tools/call").some((call) => call.params?.name === tool), `a ${tool} call reaching the server`);
}

// A manager (closed after the test) whose trace is kept, in order.
function traced(options: McpManagerOptions): { manager: ReturnType<typeof managed>; trace: McpManagerTraceEvent[] } {
  const trace: McpManagerTraceEvent[] = [];
  return { manager: managed({ ...options, onTrace: (event) => trace.push(event) }), trace };
}

describe("stopServer", () => {
  it("rejects the server's calls in flight as a shutdown, resolves once its process is gone, and leaves the other servers running", async () => {
    const [a, b] = [workspace(), workspace()];
    const manager = managed({ servers: { alpha: fixture(a, ["echo", "never"]), beta: fixture(b, ["echo"]) } });
    await manager.callTool("alpha/echo", { value: 1 });
    await manager.callTool("beta/echo", { value: 1 });
    const held = expect(manager.callTool("alpha/never")).rejects.toMatchObject({ code: "MCP_ABORTED", reason: "shutdown", outcome: "unknown" });
    await inFlight(a, "never");
    await manager.stopServer("alpha");
    await held;
    expect(a.pids().filter(isAlive)).toEqual([]);
    expect(b.pids().filter(isAlive)).toHaveLength(1);
    await expect(manager.callTool("beta/echo", { value: 2 })).resolves.toEqual({ content: 2 });
    expect(manager.metrics()).toMatchObject({ runningServers: 1, servers: { alpha: { state: "idle", running: false, failures: 0, pending: 0 } } });
    expect(manager.report().calls.stopped).toEqual({ user: 0, budget: 0, shutdown: 1, process: 0 });
  });

  it("counts no failure: the next call starts a fresh process at once, however long the backoff", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: fixture(ws, ["echo"]) }, backoffInitialMs: 60_000 });
    await manager.callTool("s/echo", { value: 1 });
    await manager.stopServer("s");
    await expect(manager.callTool("s/echo", { value: 2 })).resolves.toEqual({ content: 2 });
    expect(ws.pids()).toHaveLength(2);
    expect(ws.pids().filter(isAlive)).toHaveLength(1);
    const metrics = manager.metrics().servers.s;
    expect(metrics).toMatchObject({ state: "ready", starts: 2, failures: 0 });
    // One exit, an expected one. (How it ended, SIGTERM or stdin's end, is the server's race.)
    expect(Object.values(metrics!.exits).reduce((a, b) => a + b, 0)).toBe(1);
    expect(Object.keys(metrics!.exits).every((kind) => kind.startsWith("expected "))).toBe(true);
  });

  it("stops with the reason it is given, and a stop of a server that never ran starts nothing", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: fixture(ws, ["never"]), idle: fixture(workspace(), ["echo"]) } });
    await manager.stopServer("idle");
    expect(manager.metrics().servers.idle).toMatchObject({ state: "unused", starts: 0 });
    const held = expect(manager.callTool("s/never")).rejects.toMatchObject({ code: "MCP_ABORTED", reason: "budget" });
    await inFlight(ws, "never");
    await manager.stopServer("s", new McpCancel("budget", "the agent's budget for this server is spent"));
    await held;
  });

  it("ends a start in progress: the callers waiting for it are rejected as a shutdown (nothing sent) and no process is left", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: fixture(ws, ["echo"], { scenarios: ["hang-initialize"] }) } });
    const refused = { code: "MCP_ABORTED", reason: "shutdown", outcome: "not-sent" };
    const waiting = [expect(manager.callTool("s/echo", { value: 1 })).rejects.toMatchObject(refused), expect(manager.tools("s")).rejects.toMatchObject(refused)];
    await waitFor(() => received(ws.log(), "initialize").length === 1, "the server to receive initialize");
    await manager.stopServer("s");
    await Promise.all(waiting);
    expect(ws.pids().filter(isAlive)).toEqual([]);
    expect(manager.metrics().servers.s).toMatchObject({ state: "idle", failures: 0, running: false });
  });

  it("lets a call made during the stop wait for it, then start a fresh process: the old one exited before the new one spawned", async () => {
    const ws = workspace();
    // A server that ignores SIGTERM and stdin end: its close takes closeTimeoutMs, then SIGKILL.
    const { manager, trace } = traced({ servers: { s: { ...fixture(ws, ["echo"], { scenarios: ["ignore-sigterm"] }), closeTimeoutMs: 300 } } });
    await manager.callTool("s/echo", { value: 1 });
    const stopping = manager.stopServer("s");
    const next = manager.callTool("s/echo", { value: 2 });
    await stopping;
    await expect(next).resolves.toEqual({ content: 2 });
    const steps = trace.filter((event) => event.kind === "server").map((event) => `${event.serverInstanceId}:${event.kind === "server" ? event.phase : ""}`);
    const [first, second] = [...new Set(steps.map((step) => step.split(":")[0]))];
    expect(steps.indexOf(`${first}:exited`)).toBeLessThan(steps.indexOf(`${second}:spawned`));
    expect(ws.pids().filter(isAlive)).toHaveLength(1);
  });

  it("resolves once a server its hash change retired is gone too", async () => {
    const ws = workspace();
    const config = { ...fixture(ws, ["echo"], { scenarios: ["ignore-sigterm"] }), closeTimeoutMs: 1_000 }; // its close takes 1 s
    const manager = managed({ servers: { s: config } });
    await manager.callTool("s/echo", { value: 1 });
    const [retired] = ws.pids();
    config.args = fixture(ws, ["echo"]).args; // a new hash: the running server is retired
    await manager.callTool("s/echo", { value: 2 });
    await manager.stopServer("s");
    expect([retired, ...ws.pids()].filter((pid) => isAlive(pid!))).toEqual([]);
  });

  it("keeps a server that is backing off or quarantined so", async () => {
    const [a, b] = [workspace(), workspace()];
    const crashing = (ws: FixtureWorkspace) => fixture(ws, ["echo"], { scenarios: ["crash-on-start"] });
    const backingOff = managed({ servers: { s: crashing(a) }, backoffInitialMs: 60_000 });
    await expect(backingOff.callTool("s/echo", { value: 1 })).rejects.toMatchObject({ reason: "process" });
    await backingOff.stopServer("s");
    await expect(backingOff.callTool("s/echo", { value: 1 })).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED", availability: "backoff", failures: 1 });
    const quarantined = managed({ servers: { s: crashing(b) }, maxFailures: 1 });
    await expect(quarantined.callTool("s/echo", { value: 1 })).rejects.toMatchObject({ reason: "process" });
    await quarantined.stopServer("s");
    await expect(quarantined.callTool("s/echo", { value: 1 })).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED", availability: "quarantined" });
    expect([a.pids(), b.pids()].map((pids) => pids.length)).toEqual([1, 1]);
  });

  it("refuses an unknown server, and after close() resolves at once without starting anything", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: fixture(ws, ["echo"]) } });
    await expect(manager.stopServer("nope")).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT", message: 'unknown server "nope"' });
    await manager.callTool("s/echo", { value: 1 });
    await Promise.all([manager.stopServer("s"), manager.stopServer("s")]);
    expect(ws.pids().filter(isAlive)).toEqual([]);
    await manager.close();
    await manager.stopServer("s");
    await expect(manager.callTool("s/echo", { value: 2 })).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    expect(ws.pids()).toHaveLength(1);
  });
});

describe("close() and retired servers", () => {
  it("resolves once a server its hash change retired is gone too", async () => {
    const ws = workspace();
    const config = { ...fixture(ws, ["echo"], { scenarios: ["ignore-sigterm"] }), closeTimeoutMs: 1_000 }; // its close takes 1 s
    const manager = managed({ servers: { s: config } });
    await manager.callTool("s/echo", { value: 1 });
    config.args = fixture(ws, ["echo"]).args;
    await manager.callTool("s/echo", { value: 2 });
    await manager.close();
    expect(ws.pids().filter(isAlive)).toEqual([]);
    expect(manager.metrics().runningServers).toBe(0);
  });
});
