// The server manager's rules beyond start/backoff/quarantine, with fake clients, a
// hand-moved clock and vitest's fake timers (for the heartbeat only): the failure count
// resets only after sustained health, a death while idle is noticed when it happens, the
// heartbeat has its own deadline and takes a silent server out, and a start whose client
// cannot be made (its secrets could not be fetched) is a failed start.
import { afterEach, describe, expect, it, vi } from "vitest";
import { McpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import { managerOnFakes } from "./fake-manager.ts";
import { ServerManager, type ClientEvents, type ManagedClient, type ServerManagerOptions } from "../src/server-manager.ts";

interface Fake extends ManagedClient {
  initialized: boolean;
  pid: number | undefined;
  closed: number;
  events: ClientEvents;
  /** What each method does next: "ok", or an error to throw, or "hang" (never settles). */
  next: Partial<Record<"callTool" | "ping", "ok" | "hang" | McpError>>;
  pings: Array<number | undefined>;
}

let pid = 500;
function fake(events: ClientEvents): Fake {
  const act = async (what: "ok" | "hang" | McpError | undefined, value: unknown) => {
    if (what instanceof McpError) throw what;
    if (what === "hang") await new Promise(() => {});
    return value;
  };
  const client: Fake = {
    initialized: false,
    pid: undefined,
    pendingCount: 0,
    closed: 0,
    events,
    next: {},
    pings: [],
    async initialize() {
      client.initialized = true;
      client.pid = pid++;
      return { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "f", version: "1" } } as never;
    },
    listTools: async () => [],
    // A call named "held" never settles, whatever `next` says.
    callTool: async (name) => act(name === "held" ? "hang" : client.next.callTool, { content: name }),
    async ping(options) {
      client.pings.push(options?.timeoutMs);
      await act(client.next.ping, undefined);
    },
    async close() {
      client.closed += 1;
      client.initialized = false;
    },
  };
  return client;
}

function setup(options: Partial<ServerManagerOptions> = {}) {
  return managerOnFakes(fake, { backoffInitialMs: 100, backoffFactor: 2, backoffMaxMs: 1_000, maxFailures: 3, healthyAfterMs: 10_000, ...options });
}

const crash = () => new McpError("MCP_PROCESS_EXIT", "server exited (code 3)");

afterEach(() => {
  vi.useRealTimers();
});

describe("ServerManager: failure counting", () => {
  it("quarantines a server that starts fine but crashes on every call", async () => {
    const { manager, clients, advance } = setup();
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const call = manager.callTool("a");
      await vi.waitFor(() => expect(clients).toHaveLength(attempt));
      clients[attempt - 1]!.next.callTool = crash();
      await expect(call.then(() => manager.callTool("b"))).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
      advance(manager.retryInMs ?? 0);
    }
    expect([manager.state, manager.failures, manager.starts]).toEqual(["quarantined", 3, 3]);
    await expect(manager.callTool("c")).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED", availability: "quarantined", failures: 3 });
  });

  it("starts counting again only after the server stayed up healthyAfterMs", async () => {
    const { manager, clients, advance } = setup();
    await manager.callTool("a");
    clients[0]!.next.callTool = crash();
    await expect(manager.callTool("b")).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    advance(100);
    await manager.callTool("c");
    advance(9_999);
    expect(manager.failures).toBe(1);
    advance(1);
    expect(manager.failures).toBe(0);
    clients[1]!.next.callTool = crash();
    await expect(manager.callTool("d")).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    // A fresh count: the first failure's backoff, not the second's.
    expect([manager.failures, manager.retryInMs]).toEqual([1, 100]);
  });
});

describe("ServerManager: a death while idle", () => {
  it("is a failure when it happens, so the first call after the backoff starts a fresh server", async () => {
    const { manager, clients, advance } = setup();
    await manager.callTool("a");
    clients[0]!.initialized = false;
    clients[0]!.events.exited();
    expect([manager.state, manager.failures, manager.retryInMs, clients[0]!.closed]).toEqual(["backoff", 1, 100, 1]);
    advance(100);
    expect([manager.state, manager.retryInMs]).toEqual(["idle", undefined]);
    await expect(manager.callTool("b")).resolves.toEqual({ content: "b" });
    expect([clients.length, manager.state]).toEqual([2, "ready"]);
  });

  it("within the backoff, the call is refused with the wait in a typed field", async () => {
    const { manager, clients, advance } = setup();
    await manager.callTool("a");
    clients[0]!.events.exited();
    advance(40);
    await expect(manager.callTool("b")).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED", availability: "backoff", retryInMs: 60 });
    expect(clients).toHaveLength(1);
  });

  it("ignores the exit of a client it already let go of", async () => {
    const { manager, clients } = setup();
    await manager.callTool("a");
    clients[0]!.next.callTool = crash();
    await expect(manager.callTool("b")).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    clients[0]!.events.exited();
    expect(manager.failures).toBe(1);
  });
});

describe("ServerManager: heartbeat", () => {
  it("pings an idle server after heartbeatIntervalMs with its own deadline, and keeps it while it answers", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { manager, clients } = setup({ heartbeatIntervalMs: 1_000, heartbeatTimeoutMs: 50 });
    await manager.callTool("a");
    await vi.advanceTimersByTimeAsync(999);
    expect(clients[0]!.pings).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(clients[0]!.pings).toEqual([50]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(clients[0]!.pings).toEqual([50, 50]);
    expect([manager.state, manager.failures, manager.heartbeatFailures]).toEqual(["ready", 0, 0]);
    await manager.close();
  });

  it("a failed ping closes the server and counts as a failure; new calls see the backoff", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { manager, clients } = setup({ heartbeatIntervalMs: 1_000 });
    await manager.callTool("a");
    clients[0]!.next.ping = new McpError("MCP_TIMEOUT", "ping timed out");
    await vi.advanceTimersByTimeAsync(1_000);
    expect([manager.state, manager.failures, manager.heartbeatFailures, clients[0]!.closed]).toEqual(["backoff", 1, 1, 1]);
    await expect(manager.callTool("b")).rejects.toMatchObject({ availability: "backoff" });
  });

  it("pings at once after a call timed out, and never while a call is in flight", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { manager, clients } = setup({ heartbeatIntervalMs: 1_000, heartbeatTimeoutMs: 70 });
    await manager.callTool("a");
    void manager.callTool("held");
    await manager.callTool("beside"); // ends while "held" is still in flight: no heartbeat armed
    await vi.advanceTimersByTimeAsync(5_000);
    expect(clients[0]!.pings).toEqual([]);
    clients[0]!.next.callTool = new McpError("MCP_ERROR", "remote error");
    await expect(manager.callTool("refused")).rejects.toMatchObject({ code: "MCP_ERROR" });
    expect(clients[0]!.pings).toEqual([]); // only a timeout asks at once
    clients[0]!.next.callTool = new McpError("MCP_TIMEOUT", "timed out");
    clients[0]!.next.ping = "hang";
    await expect(manager.callTool("slow")).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    expect(clients[0]!.pings).toEqual([70]);
    await manager.close();
  });

  it("takes an error answer to ping (a server without ping) as a sign of life", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { manager, clients } = setup({ heartbeatIntervalMs: 1_000 });
    await manager.callTool("a");
    clients[0]!.next.ping = new McpError("MCP_ERROR", "Method not found", { remoteCode: -32601 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(clients[0]!.pings).toHaveLength(2);
    expect([manager.state, manager.failures, manager.heartbeatFailures, clients[0]!.closed]).toEqual(["ready", 0, 0, 0]);
    await manager.close();
  });

  it("is off with heartbeatIntervalMs 0 (the default)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { manager, clients } = setup();
    await manager.callTool("a");
    clients[0]!.next.callTool = new McpError("MCP_TIMEOUT", "timed out");
    await expect(manager.callTool("b")).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(clients[0]!.pings).toEqual([]);
  });
});

describe("ServerManager: making a client", () => {
  it("counts a client that cannot be made as a failed start", async () => {
    let broken = true;
    let now = 0;
    const made: Fake[] = [];
    const manager = new ServerManager({
      client: { executable: "node" },
      createClient: async (_o, events) => {
        if (broken) throw new McpError("MCP_SPAWN_FAILED", "secret broker refused");
        return (made[made.length] = fake(events));
      },
      backoffInitialMs: 10,
      now: () => now,
    });
    await expect(manager.callTool("a")).rejects.toMatchObject({ code: "MCP_SPAWN_FAILED" });
    expect([manager.failures, manager.state, made.length]).toEqual([1, "backoff", 0]);
    broken = false;
    now += 10;
    expect(manager.state).toBe("idle");
    await expect(manager.callTool("b")).resolves.toEqual({ content: "b" });
    await manager.close();
  });

  it("closes a client made after close() began, and refuses the call", async () => {
    let finish!: () => void;
    const made: Fake[] = [];
    const manager = new ServerManager({
      client: { executable: "node" },
      createClient: (_o, events) =>
        new Promise<Fake>((resolve) => {
          finish = () => resolve((made[made.length] = fake(events)));
        }),
    });
    const call = manager.callTool("a");
    await vi.waitFor(() => expect(finish).toBeTypeOf("function"));
    const closing = manager.close();
    finish();
    await closing;
    await expect(call).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    expect(made[0]!.closed).toBe(1);
    expect(manager.failures).toBe(0);
  });
});

describe("ServerManager: stop()", () => {
  // A call of `client` that settles only when its signal aborts, with the signal's reason as cause.
  const heldUntilAborted = (client: Fake) => {
    client.callTool = (_name, _args, options) =>
      new Promise((_, reject) => options?.signal?.addEventListener("abort", () => reject(new McpError("MCP_ABORTED", "aborted", { cause: options.signal!.reason }))));
  };

  it("aborts the calls in flight with its reason and closes the client; no failure counts, and the next call starts a fresh client at once", async () => {
    const { manager, clients } = setup();
    await manager.callTool("warm");
    const first = clients[0]!;
    heldUntilAborted(first);
    const held = manager.callTool("slow").catch((error: unknown) => error);
    await vi.waitFor(() => expect(manager.activeCalls).toBe(1));
    const reason = new Error("stopped by the agent");
    await manager.stop(reason);
    expect(await held).toMatchObject({ code: "MCP_ABORTED", cause: reason });
    expect([first.closed, manager.state, manager.failures, manager.running, manager.activeCalls]).toEqual([1, "idle", 0, false, 0]);
    first.events.exited(); // the stopped server's exit, reported late, is no failure either
    expect([manager.failures, manager.state]).toEqual([0, "idle"]);
    await expect(manager.callTool("b")).resolves.toEqual({ content: "b" });
    expect([clients.length, manager.starts, manager.state]).toEqual([2, 2, "ready"]);
  });

  it("ends a start whose client is being made: the client is closed and its callers are refused as not sent", async () => {
    const { manager, clients } = setup();
    const waiting = manager.callTool("a").catch((error: unknown) => error);
    await manager.stop("agent");
    expect(await waiting).toMatchObject({ code: "MCP_ABORTED", phase: "spawn", outcome: "not-sent", cause: "agent", message: "the server was stopped while it started" });
    expect([clients[0]!.closed, clients[0]!.initialized, manager.failures, manager.state]).toEqual([1, false, 0, "idle"]);
  });

  it("ends a start during its initialize, and a client that fails to be made after the stop counts no failure", async () => {
    let finish!: () => void;
    const { manager, clients } = managerOnFakes((events) => {
      const client = fake(events);
      const init = client.initialize.bind(client);
      client.initialize = () => new Promise((resolve) => (finish = () => resolve(init())));
      return client;
    }, {});
    const waiting = manager.callTool("a").catch((error: unknown) => error);
    await vi.waitFor(() => expect(finish).toBeTypeOf("function"));
    const stopping = manager.stop("agent");
    finish();
    await stopping;
    expect(await waiting).toMatchObject({ code: "MCP_ABORTED", outcome: "not-sent" });
    expect([clients[0]!.closed >= 1, manager.failures, manager.state, manager.pid]).toEqual([true, 0, "idle", undefined]);

    let refuse!: () => void;
    const broken = new ServerManager({
      client: { executable: "node" },
      createClient: () => new Promise<Fake>((_, reject) => (refuse = () => reject(new McpError("MCP_SPAWN_FAILED", "secret broker refused")))),
    });
    const call = broken.callTool("a").catch((error: unknown) => error);
    const stopped = broken.stop("agent");
    refuse();
    await stopped;
    expect(await call).toMatchObject({ code: "MCP_ABORTED", cause: "agent" });
    expect([broken.failures, broken.state]).toEqual([0, "idle"]);
  });

  it("lets a call made during the stop wait until the old client is closed, then start a fresh one; concurrent stops share one", async () => {
    const { manager, clients } = setup();
    await manager.callTool("warm");
    let release!: () => void;
    clients[0]!.close = () => new Promise<void>((resolve) => (release = resolve));
    const stopping = manager.stop("agent");
    expect(manager.stop("again")).toBe(stopping);
    const next = manager.callTool("b");
    await vi.waitFor(() => expect(release).toBeTypeOf("function"));
    await Promise.resolve();
    expect(clients).toHaveLength(1); // nothing starts while the old server closes
    release();
    await stopping;
    await expect(next).resolves.toEqual({ content: "b" });
    expect(clients).toHaveLength(2);
  });

  it("keeps backoff, quarantine and the failure count, except what sustained health already earned", async () => {
    const { manager, clients, advance } = setup({ maxFailures: 2 });
    await manager.callTool("warm");
    clients[0]!.next.callTool = crash();
    await expect(manager.callTool("a")).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    await manager.stop("agent");
    expect([manager.state, manager.failures, manager.retryInMs]).toEqual(["backoff", 1, 100]);
    advance(100);
    await manager.callTool("b");
    await manager.stop("agent"); // up for no time: the failure still counts
    expect([manager.state, manager.failures]).toEqual(["idle", 1]);
    await manager.callTool("c");
    advance(10_000);
    await manager.stop("agent"); // up healthyAfterMs: the count starts again from zero
    expect([manager.state, manager.failures]).toEqual(["idle", 0]);
    await manager.callTool("d");
    clients[3]!.next.callTool = crash();
    await expect(manager.callTool("e")).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    expect(manager.failures).toBe(1);
    advance(100);
    await manager.callTool("f");
    clients[4]!.next.callTool = crash();
    await expect(manager.callTool("g")).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    await manager.stop("agent");
    expect([manager.state, manager.failures]).toEqual(["quarantined", 2]);
    await expect(manager.callTool("h")).rejects.toMatchObject({ availability: "quarantined" });
  });

  it("after close() is close()'s promise and starts nothing", async () => {
    const { manager, clients } = setup();
    await manager.callTool("warm");
    const closing = manager.close();
    expect(manager.stop("agent")).toBe(closing);
    await closing;
    await expect(manager.callTool("late")).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    expect(clients).toHaveLength(1);
  });
});
