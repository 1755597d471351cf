// The server manager's decisions with fake clients and a hand-moved clock: lazy start,
// health check, failures counted once per client, backoff, quarantine, close and parent
// abort. (Against real servers: tests/hardening/server-manager.test.ts.)
import { describe, expect, it, vi } from "vitest";
import { McpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import {
  DEFAULT_BACKOFF_FACTOR,
  DEFAULT_BACKOFF_INITIAL_MS,
  DEFAULT_BACKOFF_MAX_MS,
  DEFAULT_HEALTH_TIMEOUT_MS,
  DEFAULT_HEALTHY_AFTER_MS,
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  DEFAULT_MAX_FAILURES,
  ServerManager,
  ServerUnavailableError,
  type ManagedClient,
  type ServerManagerOptions,
} from "../src/server-manager.ts";
import { managerOnFakes } from "./fake-manager.ts";

interface Fake extends ManagedClient {
  initialized: boolean;
  pid: number | undefined;
  closed: number;
  fail(method: "initialize" | "listTools" | "callTool" | "ping", error: unknown): void;
  calls: Array<[string, unknown]>;
}

let nextPid = 100;
function fakeClient(withPing = true): Fake {
  const failures = new Map<string, unknown>();
  const answer = async (method: string, value: unknown) => {
    if (failures.has(method)) throw failures.get(method);
    return value;
  };
  const client: Fake = {
    initialized: false,
    pid: undefined,
    pendingCount: 0,
    closed: 0,
    calls: [],
    fail: (method, error) => void failures.set(method, error),
    async initialize() {
      client.calls.push(["initialize", undefined]);
      const result = await answer("initialize", { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "f", version: "1" } });
      client.initialized = true;
      client.pid = nextPid++;
      return result as never;
    },
    async listTools(options) {
      client.calls.push(["listTools", options]);
      return answer("listTools", []) as never;
    },
    async callTool(name, args, options) {
      client.calls.push(["callTool", { name, args, signal: options?.signal }]);
      if (options?.signal?.aborted) throw new McpError("MCP_ABORTED", "aborted");
      return answer("callTool", { content: name });
    },
    async close() {
      client.closed += 1;
      client.initialized = false;
    },
  };
  if (withPing) {
    client.ping = async (options) => {
      client.calls.push(["ping", options]);
      await answer("ping", undefined);
    };
  }
  return client;
}

function setup(options: Partial<ServerManagerOptions> = {}, withPing = true, prepare: (client: Fake) => void = () => {}) {
  const make = () => {
    const client = fakeClient(withPing);
    prepare(client);
    return client;
  };
  return managerOnFakes(make, { backoffInitialMs: 100, backoffFactor: 3, backoffMaxMs: 500, maxFailures: 4, ...options });
}

const exit = () => new McpError("MCP_PROCESS_EXIT", "server exited (code 1)");

describe("ServerManager", () => {
  it("states its defaults", () => {
    expect([DEFAULT_BACKOFF_INITIAL_MS, DEFAULT_BACKOFF_FACTOR, DEFAULT_BACKOFF_MAX_MS, DEFAULT_MAX_FAILURES, DEFAULT_HEALTH_TIMEOUT_MS]).toEqual([
      250, 2, 30_000, 5, 5_000,
    ]);
    expect([DEFAULT_HEALTHY_AFTER_MS, DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_HEARTBEAT_TIMEOUT_MS]).toEqual([60_000, 0, 2_000]);
  });

  it.each([
    [null, "ServerManager options must be { client: McpClientOptions }, got null"],
    [{}, "ServerManager options must be { client: McpClientOptions }, got an object"],
    [{ client: "node" }, "ServerManager options must be { client: McpClientOptions }, got an object"],
    [{ client: {}, healthTimeoutMs: 0 }, "healthTimeoutMs must be a positive integer, got 0"],
    [{ client: {}, backoffInitialMs: 1.5 }, "backoffInitialMs must be a positive integer, got 1.5"],
    [{ client: {}, backoffMaxMs: -1 }, "backoffMaxMs must be a positive integer, got -1"],
    [{ client: {}, maxFailures: "3" }, 'maxFailures must be a positive integer, got "3"'],
    [{ client: {}, backoffFactor: 0.5 }, "backoffFactor must be a number >= 1, got 0.5"],
    [{ client: {}, backoffFactor: "2" }, 'backoffFactor must be a number >= 1, got "2"'],
  ])("refuses %j as a configuration error", (options, message) => {
    expect(() => new ServerManager(options as never)).toThrow(expect.objectContaining({ code: "MCP_INVALID_ARGUMENT", phase: "configure", message }));
  });

  it("accepts a backoff factor of exactly 1", () => {
    expect(() => new ServerManager({ client: { executable: "node" }, backoffFactor: 1 })).not.toThrow();
  });

  it("starts nothing until first use, then one client for concurrent callers, health-checked with tools/list", async () => {
    const { manager, clients } = setup({ healthTimeoutMs: 1234 });
    expect([manager.state, manager.pid, manager.starts, clients.length]).toEqual(["idle", undefined, 0, 0]);
    const [a, b] = await Promise.all([manager.callTool("a"), manager.callTool("b", { x: 1 })]);
    expect([a, b]).toEqual([{ content: "a" }, { content: "b" }]);
    expect(clients).toHaveLength(1);
    expect(manager.starts).toBe(1);
    expect(manager.state).toBe("ready");
    expect(manager.pid).toBe(clients[0]!.pid);
    expect(clients[0]!.calls.slice(0, 2)).toEqual([["initialize", undefined], ["listTools", { timeoutMs: 1234 }]]);
    expect(await manager.listTools()).toEqual([]);
    expect(clients).toHaveLength(1);
  });

  it("health-checks with ping when asked and the client has it, else with tools/list", async () => {
    const pinging = setup({ healthCheck: "ping" });
    await pinging.manager.callTool("a");
    expect(pinging.clients[0]!.calls[1]).toEqual(["ping", { timeoutMs: DEFAULT_HEALTH_TIMEOUT_MS }]);
    const noPing = setup({ healthCheck: "ping" }, false);
    await noPing.manager.callTool("a");
    expect(noPing.clients[0]!.calls[1]![0]).toBe("listTools");
  });

  it("passes each call its own signal, linked to the caller's, and forgets the call after", async () => {
    const { manager, clients } = setup();
    const caller = new AbortController();
    await manager.callTool("a", {}, { signal: caller.signal, timeoutMs: 5 });
    const signal = (clients[0]!.calls.at(-1)![1] as { signal: AbortSignal }).signal;
    expect(signal).not.toBe(caller.signal);
    expect(manager.activeCalls).toBe(0);
    caller.abort();
    expect(signal.aborted).toBe(false); // the link went with the call
    const aborted = new AbortController();
    aborted.abort("no");
    await expect(manager.callTool("b", {}, { signal: aborted.signal })).rejects.toMatchObject({ code: "MCP_ABORTED" });
  });

  it("aborts a call in flight when its caller's signal aborts, with the caller's reason", async () => {
    const { manager, clients } = setup();
    await manager.callTool("warm");
    let release!: () => void;
    clients[0]!.callTool = (_name, _args, options) =>
      new Promise((_, reject) => {
        release = () => reject(new McpError("MCP_ABORTED", `aborted: ${String(options?.signal?.reason)}`));
        options?.signal?.addEventListener("abort", () => release());
      });
    const caller = new AbortController();
    const call = manager.callTool("slow", {}, { signal: caller.signal });
    await vi.waitFor(() => expect(manager.activeCalls).toBe(1));
    caller.abort("user stop");
    await expect(call).rejects.toMatchObject({ message: "aborted: user stop" });
    expect(manager.failures).toBe(0);
  });

  it("counts a server failure once per client, closes that client, and backs off before the next start", async () => {
    const { manager, clients, advance } = setup();
    await manager.callTool("a");
    clients[0]!.fail("callTool", exit());
    const results = await Promise.allSettled([manager.callTool("b"), manager.callTool("c")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(manager.failures).toBe(1);
    expect(clients[0]!.closed).toBe(1);
    expect(manager.state).toBe("backoff");
    const refused = (await manager.callTool("d").catch((e) => e)) as ServerUnavailableError;
    expect(refused).toBeInstanceOf(ServerUnavailableError);
    expect(refused).toMatchObject({
      code: "MCP_NOT_INITIALIZED",
      availability: "backoff",
      failures: 1,
      retryInMs: 100,
      phase: "spawn",
      message: "server unavailable: backing off after 1 failure(s); next start allowed in 100 ms",
    });
    expect(refused.cause).toBeInstanceOf(McpError);
    advance(99);
    expect(manager.state).toBe("backoff");
    await expect(manager.callTool("e")).rejects.toMatchObject({ retryInMs: 1 });
    advance(1);
    expect(manager.state).toBe("idle");
    await expect(manager.callTool("f")).resolves.toEqual({ content: "f" });
    // A start alone does not reset the count; staying up healthyAfterMs does.
    expect([clients.length, manager.failures, manager.state]).toEqual([2, 1, "ready"]);
    advance(DEFAULT_HEALTHY_AFTER_MS - 1);
    expect(manager.failures).toBe(1);
    advance(1);
    expect(manager.failures).toBe(0);
  });

  it("does not blame the server for a call's own failure", async () => {
    const { manager, clients } = setup();
    await manager.callTool("a");
    for (const code of ["MCP_ERROR", "MCP_TIMEOUT", "MCP_INVALID_ARGUMENT"] as const) {
      clients[0]!.fail("callTool", new McpError(code, code));
      await expect(manager.callTool("b")).rejects.toMatchObject({ code });
    }
    clients[0]!.fail("callTool", new Error("not an McpError"));
    await expect(manager.callTool("b")).rejects.toThrow("not an McpError");
    expect([manager.failures, clients.length, manager.state]).toEqual([0, 1, "ready"]);
  });

  it("blames the server for a protocol fault and for a failed spawn too", async () => {
    for (const code of ["MCP_PROTOCOL_ERROR", "MCP_SPAWN_FAILED", "MCP_PROCESS_EXIT"] as const) {
      const { manager, clients } = setup();
      await manager.callTool("a");
      clients[0]!.fail("callTool", new McpError(code, code));
      await expect(manager.callTool("b")).rejects.toMatchObject({ code });
      expect(manager.failures).toBe(1);
    }
  });

  it("notices a server that died between calls and restarts it after the backoff", async () => {
    const { manager, clients, advance } = setup();
    await manager.callTool("a");
    clients[0]!.initialized = false;
    await expect(manager.callTool("b")).rejects.toMatchObject({ availability: "backoff", cause: { code: "MCP_PROCESS_EXIT", message: "the server stopped between calls" } });
    advance(100);
    await expect(manager.callTool("c")).resolves.toEqual({ content: "c" });
    expect(manager.starts).toBe(2);
  });

  it("grows the backoff by the factor up to the maximum, then quarantines until released", async () => {
    let broken = true;
    const { manager, advance } = setup({}, true, (client) => {
      if (broken) client.fail("initialize", new McpError("MCP_SPAWN_FAILED", "no"));
    });
    const waits: Array<number | undefined> = [];
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      await expect(manager.callTool("x")).rejects.toMatchObject({ code: "MCP_SPAWN_FAILED" });
      const refused = (await manager.callTool("y").catch((e) => e)) as ServerUnavailableError;
      waits.push(refused.retryInMs);
      advance(refused.retryInMs ?? 0);
    }
    expect(waits).toEqual([100, 300, 500, undefined]);
    expect(manager.state).toBe("quarantined");
    await expect(manager.callTool("z")).rejects.toMatchObject({
      availability: "quarantined",
      failures: 4,
      message: "server unavailable: quarantined after 4 consecutive failures",
    });
    manager.release();
    expect([manager.state, manager.failures]).toEqual(["idle", 0]);
    broken = false;
    await expect(manager.callTool("z")).resolves.toEqual({ content: "z" });
  });

  it("release() does nothing unless quarantined", async () => {
    const { manager, clients } = setup();
    await manager.callTool("a");
    clients[0]!.fail("callTool", exit());
    await manager.callTool("b").catch(() => {});
    manager.release();
    expect([manager.state, manager.failures]).toEqual(["backoff", 1]);
  });

  it("counts a failed health check as a failure and stops that client", async () => {
    const { manager, clients } = setup({}, true, (client) => client.fail("listTools", new McpError("MCP_TIMEOUT", "health check timed out")));
    await expect(manager.callTool("a")).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    expect([manager.failures, clients[0]!.closed, manager.state]).toEqual([1, 1, "backoff"]);
  });

  it("close() aborts every call in flight, closes the client, refuses later calls, and is idempotent", async () => {
    const { manager, clients } = setup();
    await manager.callTool("warm");
    const seen: unknown[] = [];
    clients[0]!.callTool = (_n, _a, options) =>
      new Promise((_, reject) => options?.signal?.addEventListener("abort", () => (seen.push(options.signal!.reason), reject(new McpError("MCP_ABORTED", "aborted")))));
    const inFlight = manager.callTool("slow");
    await vi.waitFor(() => expect(manager.activeCalls).toBe(1));
    const [first, second] = [manager.close(), manager.close()];
    expect(second).toBe(first);
    await first;
    await expect(inFlight).rejects.toMatchObject({ code: "MCP_ABORTED" });
    expect((seen[0] as Error).message).toBe("server manager closed");
    expect([clients[0]!.closed, manager.state, manager.pid]).toEqual([1, "closed", undefined]);
    await expect(manager.callTool("late")).rejects.toMatchObject({ code: "CLIENT_CLOSED", message: "the server manager was closed", phase: "close" });
    expect(manager.failures).toBe(0);
  });

  it("close() during a start ends that start with CLIENT_CLOSED and closes its client", async () => {
    let finish!: () => void;
    const { manager, clients } = setup({}, true, (client) => {
      const init = client.initialize.bind(client);
      client.initialize = () => new Promise((resolve) => (finish = () => resolve(init())));
    });
    const start = manager.callTool("a");
    await vi.waitFor(() => expect(finish).toBeTypeOf("function"));
    const closing = manager.close();
    finish();
    await closing;
    await expect(start).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    expect(clients[0]!.closed).toBeGreaterThanOrEqual(1);
    expect(manager.failures).toBe(0);
  });

  it("a parent signal closes everything with its reason; an already aborted one refuses from the start", async () => {
    const parent = new AbortController();
    const { manager, clients } = setup({ signal: parent.signal });
    await manager.callTool("a");
    parent.abort(new Error("agent shutting down"));
    await vi.waitFor(() => expect(clients[0]!.closed).toBe(1));
    expect(manager.state).toBe("closed");
    const gone = new AbortController();
    gone.abort();
    const refused = setup({ signal: gone.signal });
    expect(refused.manager.state).toBe("closed");
    await expect(refused.manager.callTool("a")).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    expect(refused.clients).toEqual([]);
  });

  it("stops listening to the parent signal once closed", async () => {
    const parent = new AbortController();
    const spy = vi.spyOn(parent.signal, "removeEventListener");
    const { manager } = setup({ signal: parent.signal });
    await manager.close();
    expect(spy).toHaveBeenCalledWith("abort", expect.any(Function));
  });
});
