// One configured server as the manager sees it: the ServerManager of each server hash it
// has run under (backoff and quarantine belong to a hash), the clients it made (for
// metrics and the stderr tail), the secret lease of each start, the adapted tools of the
// current process, and how its calls ended.

import { McpClient, type McpClientOptions } from "./mcp-client.ts";
import type { CallCounts, McpManagerOptions, McpManagerReport, SecretBroker, SecretLease, ServerConfig, ServerMetrics } from "./manager-types.ts";
import { McpError, STOP_REASONS } from "./errors.ts";
import { ServerManager, type ClientEvents } from "./server-manager.ts";
import { LatencyWindow, type McpTraceEvent } from "./telemetry.ts";
import type { AdaptedTools } from "./tool-adapter.ts";
import { DEFAULT_MANAGER_HEARTBEAT_INTERVAL_MS } from "./manager-types.ts";

/** What a slot needs from its manager. */
export interface SlotHost {
  readonly runId: string;
  readonly options: McpManagerOptions;
  now(): number;
}

interface HashEntry {
  manager: ServerManager;
  controller: AbortController;
}

// Counters summed over the clients a slot no longer keeps: the per-client fields of its metrics.
type Totals = Pick<ServerMetrics, "timeouts" | "aborts" | "unknownResponses" | "protocolFaults" | "stderrTruncated" | "exits">;

export function emptyCounts(): CallCounts {
  return { ok: 0, toolErrors: 0, stopped: { user: 0, budget: 0, shutdown: 0, process: 0 }, failed: {} };
}

// A stop counts under its reason (only ever one of the four), any other failure under its code.
export function countFailure(counts: CallCounts, error: McpError): void {
  const reason = error.reason;
  if (reason !== undefined && STOP_REASONS.includes(reason)) counts.stopped[reason] += 1;
  else counts.failed[error.code] = (counts.failed[error.code] ?? 0) + 1;
}

export class ServerSlot {
  readonly byHash = new Map<string, HashEntry>();
  currentHash: string | undefined;
  readonly counts = emptyCounts();
  readonly latency = new LatencyWindow();
  /** The adapted tools/list of one process: valid while that manager has not restarted. */
  tools: { manager: ServerManager; starts: number; adapted: AdaptedTools } | undefined;
  /** The tools/list in flight for the callers of one ServerManager (manager-tools.ts). */
  listing: { manager: ServerManager; promise: Promise<AdaptedTools> } | undefined;
  private readonly clients: McpClient[] = [];
  private last: McpClient | undefined;
  private readonly totals: Totals = { timeouts: 0, aborts: 0, unknownResponses: 0, protocolFaults: 0, stderrTruncated: 0, exits: {} };
  private heartbeatFailuresRetired = 0;
  /** Closes of retired hashes' servers still under way: stop() and closeAll() wait for them. */
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    readonly name: string,
    readonly config: ServerConfig,
    private readonly host: SlotHost,
  ) {}

  /** The ServerManager of the current hash, if the server was used. */
  get current(): ServerManager | undefined {
    return this.currentHash === undefined ? undefined : this.byHash.get(this.currentHash)?.manager;
  }

  // The ServerManager for `hash`, made on first use.
  managerFor(hash: string): ServerManager {
    let entry = this.byHash.get(hash);
    if (!entry) {
      const controller = new AbortController();
      const o = this.host.options;
      const manager = new ServerManager({
        client: this.clientOptions(),
        createClient: (options, events) => this.makeClient(options as McpClientOptions, events),
        signal: controller.signal,
        healthCheck: "tools",
        heartbeatIntervalMs: o.heartbeatIntervalMs ?? DEFAULT_MANAGER_HEARTBEAT_INTERVAL_MS,
        ...pick(o, ["healthTimeoutMs", "heartbeatTimeoutMs", "backoffInitialMs", "backoffFactor", "backoffMaxMs", "maxFailures", "healthyAfterMs"]),
        now: () => this.host.now(),
      });
      entry = { manager, controller };
      this.byHash.set(hash, entry);
    }
    this.currentHash = hash;
    return entry.manager;
  }

  // The server under an old hash is retired: its calls stop with `reason`, then it closes.
  // A quarantined hash is kept (going back to it stays quarantined); any other is dropped,
  // so a config that changes back starts afresh instead of reusing a closed manager.
  retire(hash: string, reason: unknown): void {
    const entry = this.byHash.get(hash);
    if (!entry) return;
    if (entry.manager.state === "quarantined") return;
    this.heartbeatFailuresRetired += entry.manager.heartbeatFailures;
    entry.controller.abort(reason);
    this.byHash.delete(hash);
    const closing = entry.manager.close();
    this.retiring.add(closing);
    void closing.finally(() => this.retiring.delete(closing));
  }

  // Stops the server (every hash's) with `reason`, the slot staying usable: the next call
  // starts it again (server-manager.ts, stop()). Resolves once every process of it is gone.
  async stop(reason: unknown): Promise<void> {
    // A listing in flight belongs to the process being stopped: the next caller lists anew.
    this.listing = undefined;
    await Promise.all([...[...this.byHash.values()].map((entry) => entry.manager.stop(reason)), ...this.retiring]);
  }

  // Stops every hash's calls with `reason` and closes them.
  async closeAll(reason: unknown): Promise<void> {
    for (const entry of this.byHash.values()) entry.controller.abort(reason);
    await Promise.all([...[...this.byHash.values()].map((entry) => entry.manager.close()), ...this.retiring]);
  }

  /** The slot's line of the manager's report(). */
  summary(): McpManagerReport["servers"][number] {
    const manager = this.current;
    const hash = this.currentHash ?? null;
    if (!manager) return { name: this.name, hash, state: "unused", failures: 0, starts: 0, running: false };
    return { name: this.name, hash, state: manager.state, failures: manager.failures, starts: manager.starts, running: manager.running };
  }

  /** The options of every client this server gets (its config without the manager's fields). */
  clientOptions(): McpClientOptions {
    const { tools: _tools, maxPermission: _max, ...client } = this.config;
    return { runId: this.host.runId, ...client };
  }

  // Fetches this start's secrets, then makes the client; the lease is revoked once the
  // process exited (or, when it never started, once the client is closed). `events` is
  // given for the ServerManager's clients, not for a health check's.
  async makeClient(options: McpClientOptions, events?: ClientEvents): Promise<McpClient> {
    const lease = await this.acquire();
    let revoked = false;
    const revoke = () => {
      if (revoked) return;
      revoked = true;
      void Promise.resolve()
        .then(() => lease.revoke())
        .catch(() => {});
    };
    const onTrace = this.host.options.onTrace;
    const trace = (event: McpTraceEvent) => {
      if (event.kind === "server" && event.phase === "exited") {
        revoke();
        // After the client finished its own exit handling.
        if (events) queueMicrotask(() => events.exited());
      }
      onTrace?.({ ...event, server: this.name });
    };
    let client: McpClient;
    try {
      client = new LeasedClient(
        { ...options, env: { ...options.env, ...lease.env }, secrets: [...(options.secrets ?? []), ...lease.secrets], onTrace: trace },
        revoke,
      );
    } catch (error) {
      revoke();
      throw error;
    }
    // A server's own processes count in its metrics and stderr; a health check's do not.
    if (events) this.track(client);
    return client;
  }

  /** The redacted stderr tail of the current or last process. */
  stderr(): { text: string; truncated: boolean } {
    return this.last?.stderr ?? { text: "", truncated: false };
  }

  metrics(): ServerMetrics {
    const manager = this.current;
    const state = manager?.state ?? "unused";
    const sums = { ...this.totals, exits: { ...this.totals.exits } };
    for (const client of this.clients) addClient(sums, client);
    return {
      state,
      availability: state === "backoff" || state === "quarantined" ? state : null,
      retryInMs: manager?.retryInMs ?? null,
      running: manager?.running ?? false,
      starts: manager?.starts ?? 0,
      failures: manager?.failures ?? 0,
      heartbeatFailures: this.heartbeatFailuresRetired + [...this.byHash.values()].reduce((n, e) => n + e.manager.heartbeatFailures, 0),
      pending: this.clients.reduce((n, client) => n + client.pendingCount, 0),
      calls: { ...this.counts, stopped: { ...this.counts.stopped }, failed: { ...this.counts.failed } },
      latencyMs: this.latency.summary(),
      ...sums,
    };
  }

  private async acquire(): Promise<SecretLease> {
    const broker: SecretBroker | undefined = this.host.options.secretBroker;
    if (!broker) return { env: {}, secrets: [], revoke() {} };
    let lease: SecretLease;
    try {
      lease = await broker(this.name);
    } catch (error) {
      throw new McpError("MCP_SPAWN_FAILED", `server ${this.name}: the secret broker failed`, { phase: "spawn", reason: "process", cause: error });
    }
    const envOk = lease !== null && typeof lease === "object" && lease.env !== null && typeof lease.env === "object";
    if (!envOk || !Array.isArray(lease.secrets) || typeof lease.revoke !== "function") {
      throw new McpError("MCP_SPAWN_FAILED", `server ${this.name}: the secret broker must return { env, secrets, revoke }`, { phase: "spawn", reason: "process" });
    }
    return lease;
  }

  // Keeps the client for metrics; clients whose process is gone are folded into totals.
  private track(client: McpClient): void {
    for (const old of this.clients.splice(0)) {
      if (old.state === "closed") addClient(this.totals, old);
      else this.clients.push(old);
    }
    this.clients.push(client);
    this.last = client;
  }
}

// A client that revokes its start's lease once closed (a process that never started has
// no exit to wait for).
class LeasedClient extends McpClient {
  constructor(
    options: McpClientOptions,
    private readonly revoke: () => void,
  ) {
    super(options);
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.revoke();
    }
  }
}

function addClient(into: Totals, client: McpClient): void {
  const m = client.metrics;
  into.timeouts += m.timeouts;
  into.aborts += m.aborts;
  into.unknownResponses += m.unknownResponses;
  into.protocolFaults += m.protocolFaults;
  if (m.stderrTruncated) into.stderrTruncated += 1;
  for (const [kind, n] of Object.entries(m.exitReasons)) into.exits[kind] = (into.exits[kind] ?? 0) + n;
}

function pick<T extends object, K extends keyof T>(from: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key];
  return out;
}
