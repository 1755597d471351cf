// Server manager: owns one configured server across many client lifetimes. It starts the
// server lazily on first use, checks its health (initialize + tools/list, or ping), pings a
// live server after idle time or after a call timed out (the heartbeat, with its own
// deadline), and after a failure (a start that fails, a crash, a protocol fault, a failed
// heartbeat) waits an exponential backoff before the next start, up to a failure limit
// after which the server is quarantined. The failure count resets only after sustained
// health (a server that stays up healthyAfterMs), never on a start alone, so a server that
// starts fine and crashes on every call still ends quarantined. A server that dies while
// idle is noticed when it exits, so its backoff runs from then and the next call after it
// starts a fresh one. Calls that were in flight when the server died fail with the
// client's MCP_PROCESS_EXIT (outcome "unknown" when the server had received them) and are
// never replayed. A parent AbortSignal aborts every call through the client's normal
// settle path, then closes the server.
//
// The backoff needs no timer: a failure records when the next start is allowed, and the
// next call compares that with the clock, so tests drive time with an injected clock.

import { McpError, type McpErrorCode } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import type { CallOptions } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { isPlainObject, type Tool } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";
import { check } from "../../../labs/33-mcp-lite/solution/src/validate.ts";
import { waitForStart } from "./call-wait.ts";
import { Heartbeat } from "./heartbeat.ts";
import { ServerUnavailableError } from "./server-unavailable.ts";
import { resolveConfig, type ClientEvents, type Config, type ManagedClient, type ManagerState, type ServerManagerOptions } from "./server-manager-options.ts";

export * from "./server-manager-options.ts";
export * from "./server-unavailable.ts";

// Codes after which the server itself is suspect (as opposed to one call going wrong).
const SERVER_FAILURES: ReadonlySet<McpErrorCode> = new Set(["MCP_PROCESS_EXIT", "MCP_PROTOCOL_ERROR", "MCP_SPAWN_FAILED"]);

export class ServerManager {
  private readonly config: Config;
  private readonly signal: AbortSignal | undefined;
  private lifecycle: ManagerState = "idle";
  private client: ManagedClient | undefined;
  private starting: Promise<ManagedClient> | undefined;
  /** What the last start's health check listed, and for which client. */
  private startListing: { client: ManagedClient; tools: Tool[] } | undefined;
  private failureCount = 0;
  private nextStartAt = 0;
  private readyAt: number | undefined;
  private lastFailure: unknown;
  private readonly calls = new Set<AbortController>();
  private closing: Promise<void> | undefined;
  /** Closes of servers let go of after a failure (a failed heartbeat, a crash): shutdown()
   *  waits for them too, so no process outlives a close() that resolved. */
  private readonly retiring = new Map<ManagedClient, Promise<void>>();
  private readonly heartbeat: Heartbeat;
  private readonly onParentAbort = () => void this.shutdown(this.signal?.reason);
  /** Servers started so far (a restart counts). */
  starts = 0;

  constructor(options: ServerManagerOptions) {
    const clientOk = isPlainObject(options) && isPlainObject(options.client);
    check(clientOk, "ServerManager options", "{ client: McpClientOptions }", options, "configure");
    this.config = resolveConfig(options);
    this.heartbeat = new Heartbeat(
      this.config.heartbeatIntervalMs,
      this.config.heartbeatTimeoutMs,
      (client) => this.client === client && this.lifecycle === "ready" && this.calls.size === 0,
      (client) => this.client === client && this.lifecycle === "ready",
      (client, error) => this.serverFailed(client, error),
    );
    this.signal = options.signal;
    if (this.signal?.aborted) this.lifecycle = "closed";
    else this.signal?.addEventListener("abort", this.onParentAbort, { once: true });
  }

  get state(): ManagerState {
    if (this.lifecycle === "backoff" && this.config.now() >= this.nextStartAt) return "idle";
    return this.lifecycle;
  }

  /** Consecutive failures not yet outlived by sustained health. */
  get failures(): number {
    return this.sustained() ? 0 : this.failureCount;
  }

  /** Ms until a start is allowed again while backing off; undefined otherwise. */
  get retryInMs(): number | undefined {
    return this.state === "backoff" ? this.nextStartAt - this.config.now() : undefined;
  }

  /** Heartbeat pings that failed (each also counted as a failure of the server). */
  get heartbeatFailures(): number {
    return this.heartbeat.failures;
  }

  /** Calls in flight through this manager. */
  get activeCalls(): number {
    return this.calls.size;
  }

  /** The running server's pid, if any. */
  get pid(): number | undefined {
    return this.client?.pid;
  }

  /** True while a server process of this manager is still alive: the current one, or one
   *  let go of after a failure whose close has not finished yet. */
  get running(): boolean {
    return this.client?.pid !== undefined || [...this.retiring.keys()].some((client) => client.pid !== undefined);
  }

  // Calls a tool on a healthy server, starting (or restarting, after the backoff) one
  // when needed. Never retries: a failed call is the caller's to judge.
  async callTool(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    return this.run("tools/call", (client, call) => client.callTool(name, args, call), options);
  }

  async listTools(options: CallOptions = {}): Promise<Tool[]> {
    return this.run("tools/list", (client, call) => client.listTools(call), options);
  }

  /** listTools(), except that a call which waited for a start health-checked with tools/list
   *  gets (a copy of) that check's listing: the same process answered it a moment ago. */
  async listToolsAfterStart(options: CallOptions = {}): Promise<Tool[]> {
    const cold = this.starting !== undefined || !this.client?.initialized;
    const fromStart = (client: ManagedClient) => (cold && this.startListing?.client === client ? this.startListing.tools : undefined);
    return this.run("tools/list", async (client, call) => structuredClone(fromStart(client)) ?? client.listTools(call), options);
  }

  /** A caller's wait on this server timed out (manager-tools.ts): ping it now, as after a
   *  call of it that timed out. */
  suspect(): void {
    if (this.client) void this.heartbeat.beat(this.client);
  }

  /** Lifts a quarantine (after the configuration or binary changed and was approved again). */
  release(): void {
    if (this.lifecycle !== "quarantined") return;
    this.failureCount = 0;
    this.nextStartAt = 0;
    this.lifecycle = "idle";
  }

  // Closes the server and refuses every later call. Idempotent.
  close(): Promise<void> {
    return this.shutdown(undefined);
  }

  // Runs one call with its own AbortController, linked to the caller's signal, so a
  // parent abort can end it through the client's normal settle path. The call's signal and
  // deadline hold from the moment it is made: while its server starts, too (the start goes
  // on for the other callers).
  private async run<T>(method: string, work: (client: ManagedClient, call: CallOptions) => Promise<T>, options: CallOptions): Promise<T> {
    const began = this.config.now();
    const client = await waitForStart(method, options, () => this.ready());
    const left = options.timeoutMs === undefined ? undefined : Math.max(1, Math.ceil(options.timeoutMs - (this.config.now() - began)));
    const controller = new AbortController();
    const callerSignal = options.signal;
    const forward = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) forward();
    else callerSignal?.addEventListener("abort", forward, { once: true });
    this.calls.add(controller);
    this.heartbeat.stop();
    try {
      return await work(client, { ...options, signal: controller.signal, ...(left === undefined ? {} : { timeoutMs: left }) });
    } catch (error) {
      if (error instanceof McpError && SERVER_FAILURES.has(error.code)) this.serverFailed(client, error);
      // A call that timed out may mean a frozen server: ask it at once, on its own deadline.
      if (error instanceof McpError && error.code === "MCP_TIMEOUT") void this.heartbeat.beat(client);
      throw error;
    } finally {
      this.calls.delete(controller);
      callerSignal?.removeEventListener("abort", forward);
      this.heartbeat.arm(this.client);
    }
  }

  // Returns a healthy client, starting one if allowed. Concurrent callers share one start.
  private async ready(): Promise<ManagedClient> {
    if (this.lifecycle === "closed") throw closedError();
    if (this.starting) return this.starting;
    if (this.client && this.client.initialized) return this.client;
    // A client that is no longer initialized lost its server between calls (a fault the
    // exit hook did not report, e.g. a client without one).
    if (this.client) this.serverFailed(this.client, new McpError("MCP_PROCESS_EXIT", "the server stopped between calls"));
    if (this.lifecycle === "quarantined") {
      throw new ServerUnavailableError("quarantined", this.failureCount, undefined, this.lastFailure);
    }
    const wait = this.nextStartAt - this.config.now();
    if (wait > 0) throw new ServerUnavailableError("backoff", this.failureCount, wait, this.lastFailure);
    this.starting = this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(): Promise<ManagedClient> {
    this.lifecycle = "starting";
    this.starts += 1;
    const client = await this.createClient();
    this.client = client;
    try {
      await client.initialize();
      const check = { timeoutMs: this.config.healthTimeoutMs };
      if (this.config.healthCheck === "ping" && client.ping) await client.ping(check);
      else this.startListing = { client, tools: await client.listTools(check) };
    } catch (error) {
      this.serverFailed(client, error);
      if (this.isClosed()) throw closedError();
      throw error;
    }
    if (this.isClosed() || this.client !== client) {
      await client.close();
      throw closedError();
    }
    this.lifecycle = "ready";
    this.readyAt = this.config.now();
    this.heartbeat.arm(client);
    return client;
  }

  // Makes the next client; a failure to make one (its secrets could not be fetched, bad
  // options) is a failed start. A shutdown meanwhile closes what was made.
  private async createClient(): Promise<ManagedClient> {
    let client: ManagedClient | undefined;
    const events: ClientEvents = { exited: () => client && this.exited(client) };
    try {
      client = await this.config.createClient(this.config.client, events);
    } catch (error) {
      if (!this.isClosed()) this.recordFailure(error);
      throw this.isClosed() ? closedError() : error;
    }
    if (this.isClosed()) {
      await client.close();
      throw closedError();
    }
    return client;
  }

  // A method, not an inline comparison: close() may change the state across an await.
  private isClosed(): boolean {
    return this.lifecycle === "closed";
  }

  // The current server has been up long enough that its earlier failures no longer count.
  private sustained(): boolean {
    return this.lifecycle === "ready" && this.readyAt !== undefined && this.config.now() - this.readyAt >= this.config.healthyAfterMs;
  }

  // The server process of the current client exited on its own (crash, kill, OOM): a
  // failure now, so the backoff runs from the moment it died, not from the next call.
  // (serverFailed ignores a client it already let go of; an exit during a start also
  // fails that start's initialize, which counts the same one failure.)
  private exited(client: ManagedClient): void {
    this.serverFailed(client, new McpError("MCP_PROCESS_EXIT", "the server exited between calls"));
  }

  // Records one failure per client instance, closes that client, and schedules the next
  // start (or quarantines). Concurrent calls failing from one crash count once.
  private serverFailed(client: ManagedClient, error: unknown): void {
    if (this.client !== client || this.lifecycle === "closed") return;
    this.client = undefined;
    this.heartbeat.stop();
    this.retiring.set(client, client.close().catch(() => {}).finally(() => this.retiring.delete(client)));
    this.recordFailure(error);
  }

  private recordFailure(error: unknown): void {
    if (this.sustained()) this.failureCount = 0;
    this.readyAt = undefined;
    this.failureCount += 1;
    this.lastFailure = error;
    if (this.failureCount >= this.config.maxFailures) {
      this.lifecycle = "quarantined";
      return;
    }
    const { backoffInitialMs, backoffFactor, backoffMaxMs } = this.config;
    const delay = Math.min(backoffMaxMs, backoffInitialMs * backoffFactor ** (this.failureCount - 1));
    this.nextStartAt = this.config.now() + delay;
    this.lifecycle = "backoff";
  }

  // Aborts every call in flight (each settles through the client as MCP_ABORTED), then
  // closes the server and waits for it to be gone.
  private shutdown(reason: unknown): Promise<void> {
    this.closing ??= (async () => {
      this.lifecycle = "closed";
      this.heartbeat.stop();
      this.signal?.removeEventListener("abort", this.onParentAbort);
      for (const controller of [...this.calls]) controller.abort(reason ?? new Error("server manager closed"));
      const client = this.client;
      this.client = undefined;
      // Closing first also ends a start in progress (its initialize rejects CLIENT_CLOSED).
      if (client) await client.close();
      if (this.starting) await this.starting.catch(() => {});
      await Promise.all([...this.retiring.values()]);
    })();
    return this.closing;
  }
}

function closedError(): McpError {
  return new McpError("CLIENT_CLOSED", "the server manager was closed", { phase: "close" });
}
