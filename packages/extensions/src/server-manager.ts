// Server manager: owns one configured server across many client lifetimes. It starts the
// server lazily on first use, checks its health (initialize + tools/list, or ping), and
// after a failure (a start that fails, a crash, a protocol fault) waits an exponential
// backoff before the next start, up to a failure limit after which the server is
// quarantined. Calls that were in flight when the server died fail with the client's
// MCP_PROCESS_EXIT (outcome "unknown" when the server had received them) and are never
// replayed. A parent AbortSignal aborts every call through the client's normal settle
// path, then closes the server.
//
// The backoff needs no timer: a failure records when the next start is allowed, and the
// next call compares that with the clock, so tests drive time with an injected clock.

import { McpError, type McpErrorCode } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import { McpClient, type CallOptions } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import type { McpClientOptions } from "../../../labs/33-mcp-lite/solution/src/options.ts";
import { isPlainObject, type InitializeResult, type Tool } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";
import { check, integerOption } from "../../../labs/33-mcp-lite/solution/src/validate.ts";

/** Default wait after the first failure, in ms. */
export const DEFAULT_BACKOFF_INITIAL_MS = 250;
/** Default growth of the wait per consecutive failure. */
export const DEFAULT_BACKOFF_FACTOR = 2;
/** Default longest wait between starts, in ms. */
export const DEFAULT_BACKOFF_MAX_MS = 30_000;
/** Default consecutive failures before the server is quarantined. */
export const DEFAULT_MAX_FAILURES = 5;
/** Default deadline of the health check's tools/list or ping, in ms. */
export const DEFAULT_HEALTH_TIMEOUT_MS = 5_000;

export type ManagerState = "idle" | "starting" | "ready" | "backoff" | "quarantined" | "closed";

/** The client surface the manager drives; McpClient by default. */
export interface ManagedClient {
  readonly initialized: boolean;
  readonly pendingCount: number;
  readonly pid: number | undefined;
  initialize(): Promise<InitializeResult>;
  listTools(options?: CallOptions): Promise<Tool[]>;
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  ping?(options?: CallOptions): Promise<void>;
  close(): Promise<void>;
}

export interface ServerManagerOptions {
  /** How to start the server: the options of each McpClient the manager creates. */
  client: McpClientOptions;
  /** Makes a client; default `new McpClient(options)`. */
  createClient?: (options: McpClientOptions) => ManagedClient;
  /** Cancelling it aborts every call, then closes the server for good. */
  signal?: AbortSignal;
  /** "tools": initialize + tools/list (default); "ping": initialize + ping. */
  healthCheck?: "tools" | "ping";
  /** Deadline of the health check request in ms. Default: DEFAULT_HEALTH_TIMEOUT_MS. */
  healthTimeoutMs?: number;
  /** Wait after the first failure in ms. Default: DEFAULT_BACKOFF_INITIAL_MS. */
  backoffInitialMs?: number;
  /** Growth per consecutive failure. Default: DEFAULT_BACKOFF_FACTOR. */
  backoffFactor?: number;
  /** Longest wait in ms. Default: DEFAULT_BACKOFF_MAX_MS. */
  backoffMaxMs?: number;
  /** Consecutive failures before quarantine. Default: DEFAULT_MAX_FAILURES. */
  maxFailures?: number;
  /** Source of time in ms; default Date.now. */
  now?: () => number;
}

/** Why the manager refused to start the server now. */
export type UnavailableReason = "backoff" | "quarantined";

// Raised instead of starting a server that is backing off or quarantined. Its code is
// MCP_NOT_INITIALIZED (no healthy server), and it says when a retry makes sense.
export class ServerUnavailableError extends McpError {
  readonly reason: UnavailableReason;
  readonly failures: number;
  /** Ms until a start is allowed again; undefined when quarantined. */
  readonly retryInMs: number | undefined;

  constructor(reason: UnavailableReason, failures: number, retryInMs: number | undefined, cause: unknown) {
    const why =
      reason === "quarantined"
        ? `quarantined after ${failures} consecutive failures`
        : `backing off after ${failures} failure(s); next start allowed in ${retryInMs} ms`;
    super("MCP_NOT_INITIALIZED", `server unavailable: ${why}`, { cause, phase: "spawn" });
    this.reason = reason;
    this.failures = failures;
    this.retryInMs = retryInMs;
  }
}

// Codes after which the server itself is suspect (as opposed to one call going wrong).
const SERVER_FAILURES: ReadonlySet<McpErrorCode> = new Set(["MCP_PROCESS_EXIT", "MCP_PROTOCOL_ERROR", "MCP_SPAWN_FAILED"]);

export class ServerManager {
  private readonly config: Required<Omit<ServerManagerOptions, "signal" | "createClient">> & {
    createClient: (options: McpClientOptions) => ManagedClient;
  };
  private readonly signal: AbortSignal | undefined;
  private lifecycle: ManagerState = "idle";
  private client: ManagedClient | undefined;
  private starting: Promise<ManagedClient> | undefined;
  private failureCount = 0;
  private nextStartAt = 0;
  private lastFailure: unknown;
  private readonly calls = new Set<AbortController>();
  private closing: Promise<void> | undefined;
  private readonly onParentAbort = () => void this.shutdown(this.signal?.reason);
  /** Servers started so far (a restart counts). */
  starts = 0;

  constructor(options: ServerManagerOptions) {
    const clientOk = isPlainObject(options) && isPlainObject(options.client);
    check(clientOk, "ServerManager options", "{ client: McpClientOptions }", options, "configure");
    const positive = (name: keyof ServerManagerOptions, fallback: number) =>
      integerOption(name, options[name], fallback, { min: 1 }, "configure");
    const { backoffFactor = DEFAULT_BACKOFF_FACTOR } = options;
    check(typeof backoffFactor === "number" && backoffFactor >= 1, "backoffFactor", "a number >= 1", backoffFactor, "configure");
    this.config = {
      client: options.client,
      createClient: options.createClient ?? ((o) => new McpClient(o)),
      healthCheck: options.healthCheck ?? "tools",
      healthTimeoutMs: positive("healthTimeoutMs", DEFAULT_HEALTH_TIMEOUT_MS),
      backoffInitialMs: positive("backoffInitialMs", DEFAULT_BACKOFF_INITIAL_MS),
      backoffFactor,
      backoffMaxMs: positive("backoffMaxMs", DEFAULT_BACKOFF_MAX_MS),
      maxFailures: positive("maxFailures", DEFAULT_MAX_FAILURES),
      now: options.now ?? Date.now,
    };
    this.signal = options.signal;
    if (this.signal?.aborted) this.lifecycle = "closed";
    else this.signal?.addEventListener("abort", this.onParentAbort, { once: true });
  }

  get state(): ManagerState {
    if (this.lifecycle === "backoff" && this.config.now() >= this.nextStartAt) return "idle";
    return this.lifecycle;
  }

  /** Consecutive failures since the last healthy start. */
  get failures(): number {
    return this.failureCount;
  }

  /** Calls in flight through this manager. */
  get activeCalls(): number {
    return this.calls.size;
  }

  /** The running server's pid, if any. */
  get pid(): number | undefined {
    return this.client?.pid;
  }

  // Calls a tool on a healthy server, starting (or restarting, after the backoff) one
  // when needed. Never retries: a failed call is the caller's to judge.
  async callTool(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    return this.run((client, call) => client.callTool(name, args, call), options);
  }

  async listTools(options: CallOptions = {}): Promise<Tool[]> {
    return this.run((client, call) => client.listTools(call), options);
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
  // parent abort can end it through the client's normal settle path.
  private async run<T>(work: (client: ManagedClient, call: CallOptions) => Promise<T>, options: CallOptions): Promise<T> {
    const client = await this.ready();
    const controller = new AbortController();
    const callerSignal = options.signal;
    const forward = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) forward();
    else callerSignal?.addEventListener("abort", forward, { once: true });
    this.calls.add(controller);
    try {
      return await work(client, { ...options, signal: controller.signal });
    } catch (error) {
      if (error instanceof McpError && SERVER_FAILURES.has(error.code)) this.serverFailed(client, error);
      throw error;
    } finally {
      this.calls.delete(controller);
      callerSignal?.removeEventListener("abort", forward);
    }
  }

  // Returns a healthy client, starting one if allowed. Concurrent callers share one start.
  private async ready(): Promise<ManagedClient> {
    if (this.lifecycle === "closed") throw closedError();
    if (this.starting) return this.starting;
    if (this.client && this.client.initialized) return this.client;
    // A client that is no longer initialized lost its server between calls (exit, fault).
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
    const client = this.config.createClient(this.config.client);
    this.client = client;
    this.starts += 1;
    try {
      await client.initialize();
      const check = { timeoutMs: this.config.healthTimeoutMs };
      if (this.config.healthCheck === "ping" && client.ping) await client.ping(check);
      else await client.listTools(check);
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
    this.failureCount = 0; // only a healthy start resets the count
    this.lastFailure = undefined;
    return client;
  }

  // A method, not an inline comparison: close() may change the state across an await.
  private isClosed(): boolean {
    return this.lifecycle === "closed";
  }

  // Records one failure per client instance, closes that client, and schedules the next
  // start (or quarantines). Concurrent calls failing from one crash count once.
  private serverFailed(client: ManagedClient, error: unknown): void {
    if (this.client !== client || this.lifecycle === "closed") return;
    this.client = undefined;
    void client.close().catch(() => {});
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
      this.signal?.removeEventListener("abort", this.onParentAbort);
      for (const controller of [...this.calls]) controller.abort(reason ?? new Error("server manager closed"));
      const client = this.client;
      this.client = undefined;
      // Closing first also ends a start in progress (its initialize rejects CLIENT_CLOSED).
      if (client) await client.close();
      if (this.starting) await this.starting.catch(() => {});
    })();
    return this.closing;
  }
}

function closedError(): McpError {
  return new McpError("CLIENT_CLOSED", "the server manager was closed", { phase: "close" });
}
