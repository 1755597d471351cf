// McpManager: the agent's side of many MCP servers. It shows a routing catalog built from
// slim, declared metadata (no process starts for it), starts a server only when one of its
// tools is selected or it is on the prewarm list, and names every tool `server/tool`. Tool
// definitions come from the tool adapter (what the server listed, treated as untrusted,
// permission from the config: the server's maxPermission, narrowed per declared tool), and
// every call's arguments are checked against the tool's inputSchema before anything is
// written. Restart backoff, quarantine, the heartbeat and the failure count belong to one
// ServerManager per server hash (normalized config + executable content): a changed hash
// lifts a quarantine only if the approval callback says yes. Cancelling the parent signal
// (or close()) aborts every call through the client's one settle path, then closes the
// servers, and the reason travels to each rejected call and to report(); stopServer() does
// the same for one server and leaves it to start afresh on its next call.

import { randomUUID } from "node:crypto";
import { basename } from "node:path";
import { performance } from "node:perf_hooks";
import { McpError as BaseMcpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import { isPlainObject } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";
import { McpCancel, McpError, stopReasonOf, stopReasonOfError, type McpFaultReport, type McpStopReason } from "./errors.ts";
import { Approvals } from "./approvals.ts";
import { defineAsyncDispose } from "./dispose.ts";
import { checkHealth } from "./health-check.ts";
import type { CallOptions, McpClient } from "./mcp-client.ts";
import {
  DEFAULT_HEALTH_BACKOFF_MS, DEFAULT_HEALTH_PING_TIMEOUT_MS, DEFAULT_HEALTH_TIMEOUT_MS,
  type CatalogEntry, type HealthResult, type McpManagerMetrics, type McpManagerOptions,
  type McpManagerReport, type ToolDefinition,
} from "./manager-types.ts";
import { adaptedTool, identity, listAdapted, slim, toDefinition, validateServers } from "./manager-tools.ts";
import { serverHash } from "./server-hash.ts";
import type { ServerManager } from "./server-manager.ts";
import { countFailure, emptyCounts, ServerSlot } from "./server-slot.ts";

export * from "./manager-types.ts";
export type { Permission } from "./tool-adapter.ts";

export class McpManager {
  readonly runId: string;
  readonly options: McpManagerOptions;
  private readonly slots = new Map<string, ServerSlot>();
  private readonly approvals: Approvals;
  private readonly healthFailures = new Map<string, { at: number; result: HealthResult }>();
  private readonly checks = new Set<McpClient>();
  private readonly counts = emptyCounts();
  private closing: Promise<void> | undefined;
  private shutdownReason: McpStopReason | undefined;
  private readonly onParentAbort = () => void this.close(this.options.signal?.reason);

  constructor(options: McpManagerOptions) {
    validateServers(options);
    this.options = options;
    this.runId = options.runId ?? randomUUID();
    this.approvals = new Approvals(options.approve);
    for (const [name, config] of Object.entries(options.servers)) this.slots.set(name, new ServerSlot(name, config, this));
    if (options.signal?.aborted) void this.close(options.signal.reason);
    else options.signal?.addEventListener("abort", this.onParentAbort, { once: true });
  }

  // The routing catalog: every declared tool as `server/tool` with a short description.
  // Starts nothing.
  catalog(): CatalogEntry[] {
    return [...this.slots.values()].flatMap(({ name, config }) =>
      config.tools.map((tool) => ({ id: `${name}/${tool.name}`, server: name, tool: tool.name, description: slim(tool.description ?? "") })),
    );
  }

  // The server's declared tools as agent tool definitions, made by the tool adapter from a
  // fresh tools/list. Starts the server if needed.
  async tools(server: string, options: CallOptions = {}): Promise<ToolDefinition[]> {
    const slot = this.slot(server);
    const adapted = await this.run(slot, (manager) => listAdapted(slot, manager, options), false);
    const declared = new Set(slot.config.tools.map((tool) => tool.name));
    return adapted.tools.filter((tool) => declared.has(tool.remoteName)).map((tool) => toDefinition(slot.name, tool));
  }

  // One tool's definition (a fresh tools/list, like tools()).
  async select(id: string, options: CallOptions = {}): Promise<ToolDefinition> {
    const { slot, tool } = this.route(id);
    const adapted = await this.run(slot, (manager) => listAdapted(slot, manager, options), false);
    return toDefinition(slot.name, adaptedTool(slot, adapted, tool));
  }

  // Calls `server/tool` (only declared tools are routed) with arguments that match the
  // tool's inputSchema; bad arguments fail with MCP_INVALID_ARGUMENT and nothing is sent.
  async callTool(id: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    const { slot, tool } = this.route(id);
    return this.run(
      slot,
      async (manager) => {
        const cached = slot.tools?.manager === manager && slot.tools.starts === manager.starts && manager.state === "ready";
        // (A wait that ends before the tool list came is this call's: named as tools/call.)
        const adapted = cached ? slot.tools!.adapted : await listAdapted(slot, manager, options, "tools/call");
        const definition = adaptedTool(slot, adapted, tool);
        const problems = definition.check(args);
        if (problems.length > 0) {
          const message = `${id}: arguments do not match inputSchema: ${problems.join("; ")}`;
          throw new McpError("MCP_INVALID_ARGUMENT", message, { method: "tools/call", phase: "request", outcome: "not-sent" });
        }
        const started = performance.now();
        try {
          return await manager.callTool(tool, args, options);
        } finally {
          slot.latency.add(performance.now() - started);
        }
      },
      true,
    );
  }

  // Starts the prewarm list now; resolves when each has started or failed (failures are
  // reported, not thrown: a prewarm is an optimisation).
  async prewarm(): Promise<Array<{ server: string; ok: boolean; error?: McpFaultReport }>> {
    return Promise.all(
      (this.options.prewarm ?? []).map(async (server) => {
        try {
          const slot = this.slot(server);
          await this.run(slot, (manager) => listAdapted(slot, manager, {}), false);
          return { server, ok: true };
        } catch (error) {
          return { server, ok: false, error: (error as McpError).report() };
        }
      }),
    );
  }

  // initialize + tools/list + a read-only ping with its own deadline, on a fresh process
  // (health-check.ts). A failure is remembered for healthBackoffMs: checks meanwhile return
  // it without starting anything.
  async healthCheck(server: string): Promise<HealthResult> {
    const slot = this.slot(server);
    const hash = serverHash(identity(slot));
    const now = this.now();
    const remembered = this.healthFailures.get(hash);
    if (remembered && now - remembered.at < (this.options.healthBackoffMs ?? DEFAULT_HEALTH_BACKOFF_MS)) return { ...remembered.result, cached: true };
    const limits = {
      timeoutMs: this.options.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS,
      pingTimeoutMs: this.options.healthPingTimeoutMs ?? DEFAULT_HEALTH_PING_TIMEOUT_MS,
    };
    const result = await checkHealth(slot, hash, limits, {
      closed: () => (this.closing ? this.closedError() : undefined),
      register: (client) => (this.checks.add(client), () => this.checks.delete(client)),
      production: (error) => this.asProduction(error, slot),
    });
    if (result.ok) this.healthFailures.delete(hash);
    else this.healthFailures.set(hash, { at: now, result });
    return result;
  }

  /** The hash of a server's current configuration and executable. */
  serverHash(server: string): string {
    return serverHash(identity(this.slot(server)));
  }

  /** The redacted stderr tail of the server's current or last process. */
  stderr(server: string): { text: string; truncated: boolean } {
    return this.slot(server).stderr();
  }

  metrics(): McpManagerMetrics {
    const servers: McpManagerMetrics["servers"] = {};
    for (const [name, slot] of this.slots) servers[name] = slot.metrics();
    return { runId: this.runId, runningServers: Object.values(servers).filter((s) => s.running).length, servers };
  }

  report(): McpManagerReport {
    return {
      runId: this.runId,
      state: this.closing ? "closed" : "open",
      shutdownReason: this.shutdownReason ?? null,
      servers: [...this.slots.values()].map((slot) => slot.summary()),
      calls: { ...this.counts, stopped: { ...this.counts.stopped }, failed: { ...this.counts.failed } },
    };
  }

  // Stops every call with `reason` (each through its client's settle path), then closes
  // every server, health checks included, and waits for them to be gone. Idempotent; the
  // first reason wins.
  close(reason: unknown = new McpCancel("shutdown")): Promise<void> {
    this.closing ??= (async () => {
      this.shutdownReason = stopReasonOf(reason);
      this.options.signal?.removeEventListener("abort", this.onParentAbort);
      const checks = [...this.checks].map((client) => client.close());
      await Promise.all([...[...this.slots.values()].map((slot) => slot.closeAll(reason)), ...checks]);
    })();
    return this.closing;
  }

  /** Stops one server, the manager and its other servers going on: its calls in flight stop
   *  with `reason` (default: a shutdown; through the client's settle path), callers waiting
   *  for its start are refused, and the promise resolves once every process of it is gone.
   *  A deliberate stop is no failure (no backoff; a backing-off or quarantined server stays
   *  so); the next call of one of its tools starts a fresh process, once the stop finished.
   *  After close(), it resolves with close(). */
  async stopServer(server: string, reason: unknown = new McpCancel("shutdown", `server ${server} was stopped`)): Promise<void> {
    const slot = this.slot(server);
    if (this.closing) return this.closing;
    await slot.stop(reason);
  }

  /** close() with the default reason, for `await using manager = new McpManager(...)`. */
  declare [Symbol.asyncDispose]: () => Promise<void>;

  /** The manager's clock (SlotHost). */
  now(): number {
    return (this.options.now ?? Date.now)();
  }

  // Runs one operation on the server's current ServerManager and counts how it ended.
  private async run<T>(slot: ServerSlot, work: (manager: ServerManager) => Promise<T>, count: boolean): Promise<T> {
    try {
      if (this.closing) throw this.closedError();
      const value = await work(await this.managerFor(slot));
      if (count) {
        const toolError = isPlainObject(value) && value.isError === true;
        for (const counts of [this.counts, slot.counts]) counts[toolError ? "toolErrors" : "ok"] += 1;
      }
      return value;
    } catch (raw) {
      const error = this.asProduction(raw, slot);
      if (count) for (const counts of [this.counts, slot.counts]) countFailure(counts, error);
      throw error;
    }
  }

  // The ServerManager for the server's current hash. A quarantined server whose hash
  // changed starts again only after approval; an unchanged hash stays quarantined.
  private async managerFor(slot: ServerSlot): Promise<ServerManager> {
    const hash = serverHash(identity(slot));
    const previous = slot.currentHash;
    if (previous !== undefined && previous !== hash) {
      if (slot.byHash.get(previous)?.manager.state === "quarantined") {
        if (!(await this.approvals.ask({ server: slot.name, previousHash: previous, hash }))) {
          throw new McpError("MCP_NOT_INITIALIZED", `server ${slot.name} is quarantined; its hash changed but the change was not approved`, {
            phase: "spawn",
            availability: "quarantined",
            cause: { previousHash: previous, hash },
          });
        }
      } else {
        // The old server is retired: its calls stop as a shutdown, then it is closed.
        slot.retire(previous, new McpCancel("shutdown", `server ${slot.name} was replaced (its hash changed)`));
      }
      if (this.closing) throw this.closedError();
    }
    return slot.managerFor(hash);
  }

  private route(id: string): { slot: ServerSlot; tool: string } {
    if (typeof id !== "string") invalid("tool id must be a string `server/tool`");
    const slash = id.indexOf("/");
    const slot = slash > 0 ? this.slots.get(id.slice(0, slash)) : undefined;
    const tool = id.slice(slash + 1);
    if (!slot) invalid(`unknown tool ${JSON.stringify(id)}: expected \`server/tool\` with a configured server`);
    if (!slot.config.tools.some((declared) => declared.name === tool)) invalid(`server ${slot.name} has no declared tool ${JSON.stringify(tool)}`);
    return { slot, tool };
  }

  private slot(server: string): ServerSlot {
    const slot = this.slots.get(server);
    if (!slot) invalid(`unknown server ${JSON.stringify(server)}`);
    return slot;
  }

  // Errors raised by the ServerManager (backoff, quarantine, closed) or the adapter become
  // this package's McpError, with the shutdown's reason once the manager is closed.
  private asProduction(error: unknown, slot: ServerSlot): McpError {
    if (error instanceof McpError && (!this.shutdownReason || error.reason)) return error;
    if (!(error instanceof BaseMcpError)) throw error;
    // A call stopped while it waited for shared work (its server's start, a listing) says why, as the client's own errors do.
    const reason = this.shutdownReason ?? stopReasonOfError(error);
    const details: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(error)) if (key !== "code" && key !== "reason") details[key] = value;
    return new McpError(
      error.code,
      error.message,
      { ...details, cause: error, ...(reason ? { reason } : {}) },
      {
        runId: this.runId,
        executable: basename(slot.config.executable),
        serverHash: () => serverHash(identity(slot)),
        stderr: { tail: slot.stderr().text, truncated: slot.stderr().truncated },
      },
    );
  }

  private closedError(): McpError {
    return new McpError("CLIENT_CLOSED", "the MCP manager was closed", { phase: "close", reason: this.shutdownReason ?? "shutdown" });
  }
}

defineAsyncDispose(McpManager);

function invalid(message: string): never {
  throw new McpError("MCP_INVALID_ARGUMENT", message, { phase: "request" });
}
