// The server manager's options: their defaults (stated once, here), the client surface it
// drives, and the check of every option before anything starts.

import { McpClient, type CallOptions } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import type { McpClientOptions } from "../../../labs/33-mcp-lite/solution/src/options.ts";
import type { InitializeResult, Tool } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";
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
/** Default time a server must stay up before its failure count starts again from zero, in ms. */
export const DEFAULT_HEALTHY_AFTER_MS = 60_000;
/** Default idle time before a live server is pinged, in ms; 0 = no heartbeat (ServerManager's default). */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 0;
/** Default deadline of one heartbeat ping, in ms. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 2_000;

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

/** What the manager learns from a client it made: its server process exited. */
export interface ClientEvents {
  exited(): void;
}

export interface ServerManagerOptions {
  /** How to start the server: the options of each McpClient the manager creates. */
  client: McpClientOptions;
  /** Makes a client (it may first fetch what the start needs, e.g. secrets); it calls
   *  `events.exited()` when that client's server process exits. Default: `new McpClient(options)`. */
  createClient?: (options: McpClientOptions, events: ClientEvents) => ManagedClient | Promise<ManagedClient>;
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
  /** Time in ms a server must have been up when it fails for the count to start again. Default: DEFAULT_HEALTHY_AFTER_MS. */
  healthyAfterMs?: number;
  /** Idle time in ms before a live server is pinged; 0 = off. Default: DEFAULT_HEARTBEAT_INTERVAL_MS. */
  heartbeatIntervalMs?: number;
  /** Deadline of one heartbeat ping in ms. Default: DEFAULT_HEARTBEAT_TIMEOUT_MS. */
  heartbeatTimeoutMs?: number;
  /** Source of time in ms; default Date.now. */
  now?: () => number;
}

export type Config = Required<Omit<ServerManagerOptions, "signal" | "createClient">> & {
  createClient: NonNullable<ServerManagerOptions["createClient"]>;
};

// Every option checked, with its default.
export function resolveConfig(options: ServerManagerOptions): Config {
  const positive = (name: keyof ServerManagerOptions, fallback: number, min: 0 | 1 = 1) =>
    integerOption(name, options[name], fallback, { min }, "configure");
  const { backoffFactor = DEFAULT_BACKOFF_FACTOR } = options;
  check(typeof backoffFactor === "number" && backoffFactor >= 1, "backoffFactor", "a number >= 1", backoffFactor, "configure");
  return {
    client: options.client,
    createClient: options.createClient ?? ((o, events) => new McpClient(o, { exited: () => events.exited() })),
    healthCheck: options.healthCheck ?? "tools",
    healthTimeoutMs: positive("healthTimeoutMs", DEFAULT_HEALTH_TIMEOUT_MS),
    backoffInitialMs: positive("backoffInitialMs", DEFAULT_BACKOFF_INITIAL_MS),
    backoffFactor,
    backoffMaxMs: positive("backoffMaxMs", DEFAULT_BACKOFF_MAX_MS),
    maxFailures: positive("maxFailures", DEFAULT_MAX_FAILURES),
    healthyAfterMs: positive("healthyAfterMs", DEFAULT_HEALTHY_AFTER_MS),
    heartbeatIntervalMs: positive("heartbeatIntervalMs", DEFAULT_HEARTBEAT_INTERVAL_MS, 0),
    heartbeatTimeoutMs: positive("heartbeatTimeoutMs", DEFAULT_HEARTBEAT_TIMEOUT_MS),
    now: options.now ?? Date.now,
  };
}

