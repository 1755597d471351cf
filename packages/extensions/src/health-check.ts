// The deployment health check of one server: initialize, tools/list (every declared tool
// must be offered) and a read-only ping with its own deadline, on a fresh process that is
// closed (and confirmed gone) afterwards. A shutdown of the manager during the check ends
// it: the check's client is closed at once and the result says CLIENT_CLOSED.

import { performance } from "node:perf_hooks";
import { McpError } from "./errors.ts";
import type { HealthResult } from "./manager-types.ts";
import type { McpClient } from "./mcp-client.ts";
import type { ServerSlot } from "./server-slot.ts";

export interface HealthCheckHost {
  /** The manager's shutdown error, once it is closing. */
  closed(): McpError | undefined;
  /** Registers the check's client so a shutdown closes it; returns the unregister. */
  register(client: McpClient): () => void;
  /** The package's McpError for anything thrown. */
  production(error: unknown): McpError;
}

export interface HealthCheckLimits {
  timeoutMs: number;
  pingTimeoutMs: number;
}

export async function checkHealth(slot: ServerSlot, hash: string, limits: HealthCheckLimits, host: HealthCheckHost): Promise<HealthResult> {
  const started = performance.now();
  const result: HealthResult = { server: slot.name, hash, ok: false, cached: false, durationMs: 0, exited: false };
  let client: McpClient | undefined;
  let unregister = () => {};
  const stopIfClosed = () => {
    const closed = host.closed();
    if (closed) throw closed;
  };
  try {
    if (slot.byHash.get(hash)?.manager.state === "quarantined") {
      throw new McpError("MCP_NOT_INITIALIZED", `server ${slot.name} is quarantined`, { phase: "spawn", availability: "quarantined" });
    }
    stopIfClosed();
    client = await slot.makeClient({ ...slot.clientOptions(), timeoutMs: limits.timeoutMs });
    unregister = host.register(client);
    stopIfClosed();
    await client.initialize();
    stopIfClosed();
    const tools = await client.listTools({ timeoutMs: limits.timeoutMs });
    stopIfClosed();
    const offered = new Set(tools.map((tool) => tool.name));
    const missing = slot.config.tools.find((tool) => !offered.has(tool.name));
    if (missing) throw new McpError("MCP_PROTOCOL_ERROR", `declared tool ${JSON.stringify(missing.name)} is not offered`, { phase: "handshake" });
    await client.ping({ timeoutMs: limits.pingTimeoutMs });
    stopIfClosed();
    Object.assign(result, { ok: true, tools: tools.length });
  } catch (error) {
    result.error = (host.closed() ?? host.production(error)).report();
  } finally {
    unregister();
  }
  await client?.close();
  result.exited = client?.pid === undefined;
  result.durationMs = performance.now() - started;
  return result;
}
