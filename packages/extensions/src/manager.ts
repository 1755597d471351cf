// McpManager: the agent's side of many MCP servers. It shows a routing catalog built from
// slim, declared metadata (no process starts for it), starts a server only when one of its
// tools is selected or it is on the prewarm list, names every tool `server/tool`, and keys
// restart backoff and quarantine by server hash (normalized config + executable content):
// a changed hash lifts a quarantine only if the approval callback says yes. Cancelling the
// parent signal (or close()) aborts every call through the client's one settle path, then
// closes the servers, and the reason travels to each rejected call and to report().
//
// Each server hash gets one reference ServerManager (labs/33-mcp-lite/solution), which owns
// the backoff, the failure count and the quarantine; this class chooses which one serves.

import { randomUUID } from "node:crypto";
import { basename } from "node:path";
import { performance } from "node:perf_hooks";
import { McpError as BaseMcpError, type McpErrorCode } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import { ServerManager, type ManagerState } from "./server-manager.ts";
import { McpCancel, McpError, stopReasonOf, type McpFaultReport, type McpStopReason } from "./errors.ts";
import { McpClient, type CallOptions, type McpClientOptions, type Tool } from "./mcp-client.ts";
import { serverHash } from "./server-hash.ts";
import type { McpTraceEvent } from "./telemetry.ts";

/** Default deadline of each health-check step (initialize, tools/list), in ms. */
export const DEFAULT_HEALTH_TIMEOUT_MS = 5_000;
/** Default deadline of the health check's ping, in ms. */
export const DEFAULT_HEALTH_PING_TIMEOUT_MS = 2_000;
/** Default time a failed health check is remembered (no new process meanwhile), in ms. */
export const DEFAULT_HEALTH_BACKOFF_MS = 30_000;
/** Longest tool description the catalog shows, in bytes. */
export const CATALOG_DESCRIPTION_BYTES = 160;

const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** A tool as the catalog knows it before its server runs: name and a short description. */
export interface ToolDeclaration {
  name: string;
  description?: string;
}

export interface ServerConfig extends McpClientOptions {
  /** The tools this server is approved to offer (the routing catalog's slim metadata). */
  tools: ToolDeclaration[];
}

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
  healthTimeoutMs?: number;
  healthPingTimeoutMs?: number;
  healthBackoffMs?: number;
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

export interface McpManagerReport {
  runId: string;
  state: "open" | "closed";
  /** Why the manager was shut down, if it was. */
  shutdownReason: McpStopReason | null;
  servers: Array<{ name: string; hash: string | null; state: ManagerState | "unused"; failures: number; starts: number; running: boolean }>;
  calls: {
    ok: number;
    /** Calls stopped, by reason: user, budget and shutdown are deliberate; process is the server failing. */
    stopped: Record<McpStopReason, number>;
    /** Calls that failed as calls (remote error, timeout, ...), by code. */
    failed: Partial<Record<McpErrorCode, number>>;
  };
}

export class McpManager {
  readonly runId: string;
  private readonly servers = new Map<string, ServerConfig>();
  private readonly options: McpManagerOptions;
  private readonly byHash = new Map<string, ServerManager>();
  private readonly current = new Map<string, string>();
  private readonly approvals = new Map<string, Promise<boolean>>();
  private readonly healthFailures = new Map<string, { at: number; result: HealthResult }>();
  // One per server hash: aborting it stops that ServerManager's calls, then its server.
  private readonly controllers = new Map<string, AbortController>();
  private readonly counts: McpManagerReport["calls"] = { ok: 0, stopped: { user: 0, budget: 0, shutdown: 0, process: 0 }, failed: {} };
  private closing: Promise<void> | undefined;
  private shutdownReason: McpStopReason | undefined;
  private readonly onParentAbort = () => void this.close(this.options.signal?.reason);

  constructor(options: McpManagerOptions) {
    if (options === null || typeof options !== "object" || options.servers === null || typeof options.servers !== "object") {
      invalid("McpManager needs { servers: { name: ServerConfig } }");
    }
    for (const [name, config] of Object.entries(options.servers)) {
      if (!SERVER_NAME.test(name)) invalid(`server name ${JSON.stringify(name)} must match ${SERVER_NAME}`);
      if (!Array.isArray(config?.tools)) invalid(`servers.${name}.tools must list the tools it may offer`);
      const seen = new Set<string>();
      for (const tool of config.tools) {
        if (typeof tool?.name !== "string" || tool.name === "") invalid(`servers.${name}.tools: every tool needs a non-empty name`);
        if (seen.has(tool.name)) invalid(`servers.${name}.tools: ${JSON.stringify(tool.name)} is declared twice`);
        seen.add(tool.name);
      }
      this.servers.set(name, config);
    }
    for (const name of options.prewarm ?? []) {
      if (!this.servers.has(name)) invalid(`prewarm names unknown server ${JSON.stringify(name)}`);
    }
    if (options.approve !== undefined && typeof options.approve !== "function") invalid("approve must be a function");
    this.options = options;
    this.runId = options.runId ?? randomUUID();
    if (options.signal?.aborted) void this.close(options.signal.reason);
    else options.signal?.addEventListener("abort", this.onParentAbort, { once: true });
  }

  // The routing catalog: every declared tool as `server/tool` with a short description.
  // Starts nothing.
  catalog(): CatalogEntry[] {
    const entries: CatalogEntry[] = [];
    for (const [server, config] of this.servers) {
      for (const tool of config.tools) {
        entries.push({ id: `${server}/${tool.name}`, server, tool: tool.name, description: slim(tool.description ?? "") });
      }
    }
    return entries;
  }

  // Chooses a tool: starts its server if needed (lazy start, with the health check of a
  // start) and returns the tool's full definition as the server offers it.
  async select(id: string, options: CallOptions = {}): Promise<Tool> {
    const { server, tool } = this.route(id);
    const tools = await this.run(server, (manager) => manager.listTools(options), false);
    const found = tools.find((candidate) => candidate.name === tool);
    if (!found) throw new McpError("MCP_INVALID_ARGUMENT", `server ${server} does not offer ${JSON.stringify(tool)}`, { phase: "request" });
    return found;
  }

  // Calls `server/tool`; only declared tools are routed.
  async callTool(id: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    const { server, tool } = this.route(id);
    return this.run(server, (manager) => manager.callTool(tool, args, options), true);
  }

  // Starts the prewarm list now; resolves when each has started or failed (failures are
  // reported, not thrown: a prewarm is an optimisation).
  async prewarm(): Promise<Array<{ server: string; ok: boolean; error?: McpFaultReport }>> {
    return Promise.all(
      (this.options.prewarm ?? []).map(async (server) => {
        try {
          await this.run(server, (manager) => manager.listTools(), false);
          return { server, ok: true };
        } catch (error) {
          return { server, ok: false, error: (error as McpError).report() };
        }
      }),
    );
  }

  // initialize + tools/list + a read-only ping with its own deadline, on a fresh process
  // that is closed (and confirmed gone) afterwards. A failure is remembered for
  // healthBackoffMs: checks meanwhile return it without starting anything.
  async healthCheck(server: string): Promise<HealthResult> {
    const config = this.config(server);
    const hash = serverHash(identity(config));
    const now = this.now();
    const remembered = this.healthFailures.get(hash);
    const backoff = this.options.healthBackoffMs ?? DEFAULT_HEALTH_BACKOFF_MS;
    if (remembered && now - remembered.at < backoff) return { ...remembered.result, cached: true };
    const started = performance.now();
    const timeoutMs = this.options.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS;
    const client = new McpClient({ ...this.clientOptions(server, config), timeoutMs });
    let result: HealthResult;
    try {
      if (this.byHash.get(hash)?.state === "quarantined") {
        throw new McpError("MCP_NOT_INITIALIZED", `server ${server} is quarantined`, { phase: "spawn" });
      }
      if (this.closing) throw this.closedError();
      await client.initialize();
      const tools = await client.listTools({ timeoutMs });
      const offered = new Set(tools.map((tool) => tool.name));
      const missing = config.tools.find((tool) => !offered.has(tool.name));
      if (missing) throw new McpError("MCP_PROTOCOL_ERROR", `declared tool ${JSON.stringify(missing.name)} is not offered`, { phase: "handshake" });
      await client.ping({ timeoutMs: this.options.healthPingTimeoutMs ?? DEFAULT_HEALTH_PING_TIMEOUT_MS });
      result = { server, hash, ok: true, cached: false, durationMs: 0, tools: tools.length, exited: false };
    } catch (error) {
      const report = error instanceof McpError ? error.report() : this.asProduction(error, server).report();
      result = { server, hash, ok: false, cached: false, durationMs: 0, exited: false, error: report };
    }
    await client.close();
    result.exited = client.pid === undefined;
    result.durationMs = performance.now() - started;
    if (result.ok) this.healthFailures.delete(hash);
    else this.healthFailures.set(hash, { at: now, result });
    return result;
  }

  /** The hash of a server's current configuration and executable. */
  serverHash(server: string): string {
    return serverHash(identity(this.config(server)));
  }

  report(): McpManagerReport {
    return {
      runId: this.runId,
      state: this.closing ? "closed" : "open",
      shutdownReason: this.shutdownReason ?? null,
      servers: [...this.servers.keys()].map((name) => {
        const hash = this.current.get(name);
        const manager = hash === undefined ? undefined : this.byHash.get(hash);
        return {
          name,
          hash: hash ?? null,
          state: manager?.state ?? "unused",
          failures: manager?.failures ?? 0,
          starts: manager?.starts ?? 0,
          running: manager?.pid !== undefined,
        };
      }),
      calls: { ok: this.counts.ok, stopped: { ...this.counts.stopped }, failed: { ...this.counts.failed } },
    };
  }

  // Stops every call with `reason` (each through its client's settle path), then closes
  // every server and waits for them to be gone. Idempotent; the first reason wins.
  close(reason: unknown = new McpCancel("shutdown")): Promise<void> {
    this.closing ??= (async () => {
      this.shutdownReason = stopReasonOf(reason);
      this.options.signal?.removeEventListener("abort", this.onParentAbort);
      for (const controller of this.controllers.values()) controller.abort(reason);
      await Promise.all([...this.byHash.values()].map((manager) => manager.close()));
    })();
    return this.closing;
  }

  // Runs one operation on the server's current manager and counts how it ended.
  private async run<T>(server: string, work: (manager: ServerManager) => Promise<T>, count: boolean): Promise<T> {
    try {
      if (this.closing) throw this.closedError();
      const manager = await this.managerFor(server);
      const value = await work(manager);
      if (count) this.counts.ok += 1;
      return value;
    } catch (raw) {
      const error = this.asProduction(raw, server);
      if (count) {
        if (error.reason) this.counts.stopped[error.reason] += 1;
        else this.counts.failed[error.code] = (this.counts.failed[error.code] ?? 0) + 1;
      }
      throw error;
    }
  }

  // The ServerManager for the server's current hash. A quarantined server whose hash
  // changed starts again only after approval; an unchanged hash stays quarantined.
  private async managerFor(server: string): Promise<ServerManager> {
    const config = this.config(server);
    const hash = serverHash(identity(config));
    const previous = this.current.get(server);
    if (previous !== undefined && previous !== hash) {
      const old = this.byHash.get(previous);
      if (old?.state === "quarantined") {
        if (!(await this.approved({ server, previousHash: previous, hash }))) {
          throw new McpError(
            "MCP_NOT_INITIALIZED",
            `server ${server} is quarantined; its hash changed but the change was not approved`,
            { phase: "spawn", cause: { previousHash: previous, hash } },
          );
        }
      } else {
        // The old server is retired: its calls stop as a shutdown, then it is closed.
        this.controllers.get(previous)?.abort(new McpCancel("shutdown", `server ${server} was replaced (its hash changed)`));
      }
      if (this.closing) throw this.closedError();
    }
    this.current.set(server, hash);
    let manager = this.byHash.get(hash);
    if (!manager) {
      const controller = new AbortController();
      this.controllers.set(hash, controller);
      manager = new ServerManager({
        client: this.clientOptions(server, config),
        createClient: (options) => new McpClient(options as McpClientOptions),
        signal: controller.signal,
        healthCheck: "tools",
        healthTimeoutMs: this.options.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS,
        ...(this.options.backoffInitialMs === undefined ? {} : { backoffInitialMs: this.options.backoffInitialMs }),
        ...(this.options.backoffFactor === undefined ? {} : { backoffFactor: this.options.backoffFactor }),
        ...(this.options.backoffMaxMs === undefined ? {} : { backoffMaxMs: this.options.backoffMaxMs }),
        ...(this.options.maxFailures === undefined ? {} : { maxFailures: this.options.maxFailures }),
        now: () => this.now(),
      });
      this.byHash.set(hash, manager);
    }
    return manager;
  }

  // Asks once per change, however many calls are waiting on it.
  private approved(change: HashChange): Promise<boolean> {
    const key = `${change.server}\n${change.hash}`;
    let decision = this.approvals.get(key);
    if (!decision) {
      const approve = this.options.approve;
      decision = approve ? Promise.resolve().then(() => approve(change)).then((yes) => yes === true, () => false) : Promise.resolve(false);
      this.approvals.set(key, decision);
      // A "no" is asked again next time (the operator may approve later); a "yes" is spent.
      void decision.then(() => this.approvals.delete(key));
    }
    return decision;
  }

  private route(id: string): { server: string; tool: string } {
    if (typeof id !== "string") invalid("tool id must be a string `server/tool`");
    const slash = id.indexOf("/");
    const server = id.slice(0, slash);
    const tool = id.slice(slash + 1);
    const config = slash > 0 ? this.servers.get(server) : undefined;
    if (!config) invalid(`unknown tool ${JSON.stringify(id)}: expected \`server/tool\` with a configured server`);
    if (!config.tools.some((declared) => declared.name === tool)) invalid(`server ${server} has no declared tool ${JSON.stringify(tool)}`);
    return { server, tool };
  }

  private config(server: string): ServerConfig {
    const config = this.servers.get(server);
    if (!config) invalid(`unknown server ${JSON.stringify(server)}`);
    return config;
  }

  private clientOptions(server: string, config: ServerConfig): McpClientOptions {
    const { tools: _tools, ...client } = config;
    const onTrace = this.options.onTrace;
    return {
      runId: this.runId,
      ...client,
      ...(onTrace ? { onTrace: (event: McpTraceEvent) => onTrace({ ...event, server }) } : {}),
    };
  }

  // Errors raised by the reference ServerManager (backoff, quarantine, closed) become this
  // package's McpError, with the shutdown's reason once the manager is closed.
  private asProduction(error: unknown, server: string): McpError {
    if (error instanceof McpError && (!this.shutdownReason || error.reason)) return error;
    if (!(error instanceof BaseMcpError)) throw error;
    const details: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(error)) if (key !== "code") details[key] = value;
    const config = this.servers.get(server);
    return new McpError(
      error.code,
      error.message,
      { ...details, cause: error, ...(this.shutdownReason ? { reason: this.shutdownReason } : {}) },
      config && {
        runId: this.runId,
        executable: basename(config.executable),
        serverHash: () => serverHash(identity(config)),
        stderr: { tail: "", truncated: false },
      },
    );
  }

  private closedError(): McpError {
    return new McpError("CLIENT_CLOSED", "the MCP manager was closed", { phase: "close", reason: this.shutdownReason ?? "shutdown" });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

function identity(config: ServerConfig) {
  return { executable: config.executable, args: config.args ?? [], cwd: config.cwd, env: config.env ?? {}, secrets: config.secrets ?? [] };
}

// A description cut to CATALOG_DESCRIPTION_BYTES on a character boundary.
function slim(text: string): string {
  const oneLine = String(text).replace(/\s+/g, " ").trim();
  if (Buffer.byteLength(oneLine) <= CATALOG_DESCRIPTION_BYTES) return oneLine;
  let out = "";
  for (const char of oneLine) {
    if (Buffer.byteLength(out + char + "…") > CATALOG_DESCRIPTION_BYTES) break;
    out += char;
  }
  return `${out}…`;
}

function invalid(message: string): never {
  throw new McpError("MCP_INVALID_ARGUMENT", message, { phase: "request" });
}
