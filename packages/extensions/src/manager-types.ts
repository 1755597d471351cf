// The manager's public types and defaults, stated once: what a server's config holds, what
// the manager accepts, and the shapes of its tool definitions, reports and metrics.

import type { McpErrorCode } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import type { McpAvailability, McpFaultReport, McpStopReason } from "./errors.ts";
import type { McpClientOptions } from "./mcp-client.ts";
import type { ManagerState } from "./server-manager.ts";
import type { LatencySummary, McpTraceEvent } from "./telemetry.ts";
import type { Permission } from "./tool-adapter.ts";

export { DEFAULT_HEALTH_TIMEOUT_MS } from "./server-manager.ts";
/** Default deadline of the health check's ping, in ms. */
export const DEFAULT_HEALTH_PING_TIMEOUT_MS = 2_000;
/** Default time a failed health check is remembered (no new process meanwhile), in ms. */
export const DEFAULT_HEALTH_BACKOFF_MS = 30_000;
/** Longest tool description the catalog shows, in bytes. */
export const CATALOG_DESCRIPTION_BYTES = 160;
/** The manager's default idle time before a live server is pinged, in ms. */
export const DEFAULT_MANAGER_HEARTBEAT_INTERVAL_MS = 30_000;
/** Default permission ceiling of a server's tools. */
export const DEFAULT_MAX_PERMISSION: Permission = "read";

/** A tool as the catalog knows it before its server runs: name and a short description. */
export interface ToolDeclaration {
  name: string;
  description?: string;
  /** This tool's permission, when it should get less than its server's maxPermission (a
   *  read-only tool of a server that also writes). It can only narrow: one above the
   *  server's maxPermission is refused by the constructor. Default: the server's maxPermission. */
  permission?: Permission;
}

export interface ServerConfig extends McpClientOptions {
  /** The tools this server is approved to offer (the routing catalog's slim metadata). */
  tools: ToolDeclaration[];
  /** Highest permission any tool of this server may get; a tool never gets more than this,
   *  whatever its description says (a declared tool's `permission` may narrow it). Default: "read". */
  maxPermission?: Permission;
}

/** What one start of a server gets from the secret broker. */
export interface SecretLease {
  /** Entries added to the server's env (on top of the config's). */
  env: Record<string, string>;
  /** Values redacted everywhere this server's text goes (on top of the config's). */
  secrets: string[];
  /** Called once, after that server process has exited (or never started). */
  revoke(): void | Promise<void>;
}

export type SecretBroker = (server: string) => Promise<SecretLease>;

/** A quarantined server whose hash changed, waiting for re-approval. */
export interface HashChange {
  server: string;
  previousHash: string;
  hash: string;
}

export type McpManagerTraceEvent = McpTraceEvent & { server: string };

export interface McpManagerOptions {
  servers: Record<string, ServerConfig>;
  /** Servers started by prewarm(), before any of their tools is chosen. Default: none. */
  prewarm?: string[];
  /** The parent agent's signal: aborting it stops every call with its reason, then closes all servers. */
  signal?: AbortSignal;
  /** Decides whether a quarantined server whose hash changed may start again. Default: never. */
  approve?: (change: HashChange) => boolean | Promise<boolean>;
  /** Run id for every client's trace. Default: a random id per manager. */
  runId?: string;
  /** Trace of every client, with the server's name. */
  onTrace?: (event: McpManagerTraceEvent) => void;
  backoffInitialMs?: number;
  backoffFactor?: number;
  backoffMaxMs?: number;
  maxFailures?: number;
  /** Time a server must stay up before its failure count starts again from zero, in ms. Default: 60_000. */
  healthyAfterMs?: number;
  healthTimeoutMs?: number;
  healthPingTimeoutMs?: number;
  healthBackoffMs?: number;
  /** A live server is pinged (its own deadline, heartbeatTimeoutMs) after this much idle
   *  time and after any call of it timed out; a failed ping marks it unhealthy, rejects new
   *  calls to it, closes it and counts as a failure for backoff/quarantine. 0 = off.
   *  Default: 30_000. */
  heartbeatIntervalMs?: number;
  /** Deadline of one heartbeat ping, in ms. Default: 2_000. */
  heartbeatTimeoutMs?: number;
  /** Called before every start of a server (and every health check's process): what it
   *  gets, and a revoke() called once that process has exited. A rotation is a new
   *  acquire() on the next start. Default: the config's own env and secrets. */
  secretBroker?: SecretBroker;
  /** Source of time in ms; default Date.now (tests inject a clock). */
  now?: () => number;
}

export interface CatalogEntry {
  /** `server/tool`: unique across servers. */
  id: string;
  server: string;
  tool: string;
  description: string;
}

/** A tool as the agent registers it, made by the tool adapter from what the server listed. */
export interface ToolDefinition {
  /** "server/tool". */
  id: string;
  /** The adapter's slug: the name the server knows the tool by. */
  name: string;
  /** Byte-capped, control characters dropped, secrets redacted. */
  description: string;
  /** A private copy of the server's inputSchema, bounded in bytes and depth. */
  inputSchema: object;
  permission: Permission;
}

export interface HealthResult {
  server: string;
  hash: string;
  ok: boolean;
  /** True when this is a remembered failure and no process was started. */
  cached: boolean;
  durationMs: number;
  tools?: number;
  /** The server process was gone when the check returned. */
  exited: boolean;
  error?: McpFaultReport;
}

/** How the calls of one server (or of the whole manager) ended. */
export interface CallCounts {
  /** Answered, and not a tool error. */
  ok: number;
  /** Answered with `isError: true`: the tool ran and reported a failure. */
  toolErrors: number;
  /** Calls stopped, by reason: user, budget and shutdown are deliberate; process is the server failing. */
  stopped: Record<McpStopReason, number>;
  /** Calls that failed as calls (remote error, timeout, ...), by code. */
  failed: Partial<Record<McpErrorCode, number>>;
}

export interface McpManagerReport {
  runId: string;
  state: "open" | "closed";
  /** Why the manager was shut down, if it was. */
  shutdownReason: McpStopReason | null;
  servers: Array<{ name: string; hash: string | null; state: ManagerState | "unused"; failures: number; starts: number; running: boolean }>;
  calls: CallCounts;
}

/** One server's observability: counters only, never arguments, results or content. */
export interface ServerMetrics {
  state: ManagerState | "unused";
  availability: McpAvailability | null;
  retryInMs: number | null;
  running: boolean;
  starts: number;
  failures: number;
  heartbeatFailures: number;
  /** Requests in flight right now. */
  pending: number;
  calls: CallCounts;
  /** Latency of tools/call through the manager, over its most recent calls, in ms. */
  latencyMs: LatencySummary;
  timeouts: number;
  aborts: number;
  unknownResponses: number;
  protocolFaults: number;
  /** Server processes whose stderr tail dropped bytes. */
  stderrTruncated: number;
  /** Server exits by kind ("expected signal SIGTERM", "unexpected code 3", ...). */
  exits: Record<string, number>;
}

export interface McpManagerMetrics {
  runId: string;
  /** Server processes running right now. */
  runningServers: number;
  servers: Record<string, ServerMetrics>;
}
