// Server manager: owns one configured server across many client lifetimes. It starts the
// server lazily on first use, checks its health (initialize + tools/list, or ping), pings a
// live server after idle time or after a call timed out (the heartbeat, with its own
// deadline), and after a failure (a start that fails, a crash, a protocol fault, a failed
// heartbeat) backs off, then quarantines (failure-record.ts: the count resets only after
// sustained health, so a server that crashes on every call still ends quarantined). A
// server that dies while idle is noticed when it exits, so its backoff runs from then.
// Calls in flight when the server died fail with the client's MCP_PROCESS_EXIT and are
// never replayed. A parent AbortSignal aborts every call through the client's normal
// settle path, then closes the server; stop() ends the server on purpose, no failure
// counted, and the next call starts a fresh one.

import { McpError, type McpErrorCode } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import type { CallOptions } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { isPlainObject, type Tool } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";
import { check } from "../../../labs/33-mcp-lite/solution/src/validate.ts";
import { linkedController, waitForStart } from "./call-wait.ts";
import { FailureRecord } from "./failure-record.ts";
import { Heartbeat } from "./heartbeat.ts";
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
  private readonly record: FailureRecord;
  private readonly calls = new Set<AbortController>();
  private closing: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  /** stop()s so far, and the last one's reason: a start that began before it ends instead of coming up. */
  private stopped: { count: number; reason?: unknown } = { count: 0 };
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
    this.record = new FailureRecord(this.config);
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
    if (this.lifecycle === "backoff" && this.record.waitMs <= 0) return "idle";
    return this.lifecycle;
  }

  /** Consecutive failures not yet outlived by sustained health (of the server up now). */
  get failures(): number {
    return this.lifecycle === "ready" && this.record.sustained ? 0 : this.record.count;
  }

  /** Ms until a start is allowed again while backing off; undefined otherwise. */
  get retryInMs(): number | undefined {
    return this.state === "backoff" ? this.record.waitMs : undefined;
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
    this.record.reset();
    this.lifecycle = "idle";
  }

  // Stops the server on purpose, the manager staying usable: calls in flight are aborted
  // with `reason`, callers waiting for a start are refused, and it resolves once every
  // process of it is gone. No failure is counted (backoff and quarantine stay as they were).
  // A call made meanwhile waits, then starts a fresh server: two never overlap.
  stop(reason: unknown): Promise<void> {
    if (this.lifecycle === "closed") return this.closing ?? Promise.resolve();
    this.stopping ??= this.halt(reason).finally(() => (this.stopping = undefined));
    return this.stopping;
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
    const { controller, unlink } = linkedController(options.signal);
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
      unlink();
      this.heartbeat.arm(this.client);
    }
  }

  // Returns a healthy client, starting one if allowed. Concurrent callers share one start.
  private async ready(): Promise<ManagedClient> {
    while (this.stopping) await this.stopping;
    if (this.lifecycle === "closed") throw closedError();
    if (this.starting) return this.starting;
    if (this.client && this.client.initialized) return this.client;
    // A client that is no longer initialized lost its server between calls (a fault the
    // exit hook did not report, e.g. a client without one).
    if (this.client) this.serverFailed(this.client, new McpError("MCP_PROCESS_EXIT", "the server stopped between calls"));
    const refusal = this.record.refusal(this.lifecycle === "quarantined");
    if (refusal) throw refusal;
    this.starting = this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(): Promise<ManagedClient> {
    this.lifecycle = "starting";
    this.starts += 1;
    const stops = this.stopped.count;
    const client = await this.createClient(stops);
    this.client = client;
    try {
      await client.initialize();
      const check = { timeoutMs: this.config.healthTimeoutMs };
      if (this.config.healthCheck === "ping" && client.ping) await client.ping(check);
      else this.startListing = { client, tools: await client.listTools(check) };
    } catch (error) {
      this.serverFailed(client, error);
      throw this.ended(stops) ?? error;
    }
    const ended = this.ended(stops) ?? (this.client === client ? undefined : closedError());
    if (ended) {
      await client.close();
      throw ended;
    }
    this.lifecycle = "ready";
    this.record.up();
    this.heartbeat.arm(client);
    return client;
  }

  // Makes the next client; a failure to make one (its secrets could not be fetched, bad
  // options) is a failed start. A shutdown or stop meanwhile closes what was made.
  private async createClient(stops: number): Promise<ManagedClient> {
    let client: ManagedClient | undefined;
    // Its server exiting on its own (crash, kill, OOM) is a failure now, so the backoff runs
    // from the moment it died. (serverFailed ignores a client it let go of; an exit during a
    // start also fails its initialize, which counts the same one failure.)
    const exited = () => new McpError("MCP_PROCESS_EXIT", "the server exited between calls");
    const events: ClientEvents = { exited: () => client && this.serverFailed(client, exited()) };
    try {
      client = await this.config.createClient(this.config.client, events);
    } catch (error) {
      const ended = this.ended(stops);
      if (!ended) this.lifecycle = this.record.fail(error);
      throw ended ?? error;
    }
    const ended = this.ended(stops);
    if (ended) {
      await client.close();
      throw ended;
    }
    return client;
  }

  // Why a start that began after `stops` stop()s must not come up: the manager closed, or
  // a stop came since. (A method: close() and stop() change the state across an await.)
  private ended(stops: number): McpError | undefined {
    if (this.lifecycle === "closed") return closedError();
    return this.stopped.count === stops ? undefined : stoppedError(this.stopped.reason);
  }

  // Records one failure per client instance, closes that client, and schedules the next
  // start (or quarantines). Concurrent calls failing from one crash count once.
  private serverFailed(client: ManagedClient, error: unknown): void {
    if (this.client !== client || this.lifecycle === "closed") return;
    this.client = undefined;
    this.heartbeat.stop();
    this.retiring.set(client, client.close().catch(() => {}).finally(() => this.retiring.delete(client)));
    this.lifecycle = this.record.fail(error);
  }

  // stop()'s work: a start in progress learns it was stopped, a ready server stops earning
  // sustained health, and the server is ended.
  private async halt(reason: unknown): Promise<void> {
    this.stopped = { count: this.stopped.count + 1, reason };
    if (this.lifecycle === "ready") this.record.down();
    if (this.lifecycle === "ready" || this.lifecycle === "starting") this.lifecycle = "idle";
    await this.endServer(reason);
  }

  // Closes the server for good (the manager refuses every later call).
  private shutdown(reason: unknown): Promise<void> {
    this.closing ??= (async () => {
      this.lifecycle = "closed";
      this.signal?.removeEventListener("abort", this.onParentAbort);
      await this.endServer(reason ?? new Error("server manager closed"));
    })();
    return this.closing;
  }

  // Aborts every call in flight (each settles through the client as MCP_ABORTED), lets the
  // client go (its exit is then no failure), closes it, and waits for every process of it.
  private async endServer(reason: unknown): Promise<void> {
    this.heartbeat.stop();
    for (const controller of [...this.calls]) controller.abort(reason);
    const client = this.client;
    this.client = undefined;
    // Closing first also ends a start in progress (its initialize rejects CLIENT_CLOSED).
    if (client) await client.close();
    if (this.starting) await this.starting.catch(() => {});
    await Promise.all([...this.retiring.values()]);
  }
}

function closedError(): McpError {
  return new McpError("CLIENT_CLOSED", "the server manager was closed", { phase: "close" });
}

// What the callers waiting for a start get when stop() ends it: nothing was sent.
function stoppedError(reason: unknown): McpError {
  return new McpError("MCP_ABORTED", "the server was stopped while it started", { phase: "spawn", outcome: "not-sent", cause: reason });
}
