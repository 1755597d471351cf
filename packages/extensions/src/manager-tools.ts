// The manager's use of the tool adapter: a server's tools/list adapted (names, byte caps,
// bounded schemas, tool count, duplicates, permission capped by the config's
// maxPermission), kept per process for argument checks, and turned into the agent's
// ToolDefinition. Also the check of the manager's configuration, which uses the adapter's
// own name rule for server and tool names.

import { McpError } from "./errors.ts";
import type { McpManagerOptions, ToolDefinition } from "./manager-types.ts";
import { CATALOG_DESCRIPTION_BYTES, DEFAULT_MAX_PERMISSION } from "./manager-types.ts";
import type { CallOptions } from "./mcp-client.ts";
import type { ServerManager } from "./server-manager.ts";
import type { ServerSlot } from "./server-slot.ts";
import { adaptTools, capText, PERMISSIONS, SLUG, type AdaptedTools, type ToolDefinition as AdaptedTool } from "./tool-adapter.ts";

// A fresh tools/list of the server, adapted and kept for the calls of this process.
export async function listAdapted(slot: ServerSlot, manager: ServerManager, options: CallOptions): Promise<AdaptedTools> {
  const listed = await manager.listTools(options);
  const adapted = adaptTools(manager, listed, {
    serverName: slot.name,
    maxPermission: slot.config.maxPermission ?? DEFAULT_MAX_PERMISSION,
    namespaced: false,
  });
  slot.tools = { manager, starts: manager.starts, adapted };
  return adapted;
}

// The adapted tool `name`, or why the server does not offer it usably.
export function adaptedTool(slot: ServerSlot, adapted: AdaptedTools, name: string): AdaptedTool {
  const found = adapted.tools.find((tool) => tool.remoteName === name);
  if (found) return found;
  const rejected = adapted.rejected.find((tool) => tool.name === name);
  if (rejected) {
    throw new McpError("MCP_PROTOCOL_ERROR", `server ${slot.name} offers ${JSON.stringify(name)}, but the tool adapter refused it: ${rejected.reason}`, {
      method: "tools/list",
      phase: "request",
    });
  }
  throw new McpError("MCP_INVALID_ARGUMENT", `server ${slot.name} does not offer ${JSON.stringify(name)}`, { phase: "request" });
}

// The agent's view of an adapted tool: plain data, its own copy of the schema.
export function toDefinition(server: string, tool: AdaptedTool): ToolDefinition {
  return {
    id: `${server}/${tool.remoteName}`,
    name: tool.remoteName,
    description: tool.description,
    inputSchema: structuredClone(tool.inputSchema),
    permission: tool.permission,
  };
}

// The manager's configuration, checked before anything starts.
export function validateServers(options: McpManagerOptions): void {
  if (options === null || typeof options !== "object" || options.servers === null || typeof options.servers !== "object") {
    invalid("McpManager needs { servers: { name: ServerConfig } }");
  }
  for (const [name, config] of Object.entries(options.servers)) {
    if (!SLUG.test(name)) invalid(`server name ${JSON.stringify(name)} must match ${SLUG}`);
    if (!Array.isArray(config?.tools)) invalid(`servers.${name}.tools must list the tools it may offer`);
    const seen = new Set<string>();
    for (const tool of config.tools) {
      if (typeof tool?.name !== "string" || !SLUG.test(tool.name)) invalid(`servers.${name}.tools: every tool needs a name matching ${SLUG}`);
      if (seen.has(tool.name)) invalid(`servers.${name}.tools: ${JSON.stringify(tool.name)} is declared twice`);
      seen.add(tool.name);
    }
    if (config.maxPermission !== undefined && !PERMISSIONS.includes(config.maxPermission)) {
      invalid(`servers.${name}.maxPermission must be one of ${PERMISSIONS.join(", ")}`);
    }
  }
  for (const name of options.prewarm ?? []) {
    if (!Object.hasOwn(options.servers, name)) invalid(`prewarm names unknown server ${JSON.stringify(name)}`);
  }
  for (const key of ["approve", "secretBroker", "onTrace"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") invalid(`${key} must be a function`);
  }
  for (const [key, min] of [["heartbeatIntervalMs", 0], ["heartbeatTimeoutMs", 1], ["healthyAfterMs", 1]] as const) {
    const value = options[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= min)) invalid(`${key} must be an integer >= ${min}, got ${String(value)}`);
  }
}

// What the server hash covers: the config that decides which program runs, and how.
export function identity({ config }: ServerSlot) {
  return { executable: config.executable, args: config.args ?? [], cwd: config.cwd, env: config.env ?? {}, secrets: config.secrets ?? [] };
}

// A declared description on one line, cut to CATALOG_DESCRIPTION_BYTES on a character boundary.
export function slim(text: string): string {
  const oneLine = String(text).replace(/\s+/g, " ").trim();
  if (Buffer.byteLength(oneLine) <= CATALOG_DESCRIPTION_BYTES) return oneLine;
  return `${capText(oneLine, CATALOG_DESCRIPTION_BYTES - Buffer.byteLength("…")).text}…`;
}

function invalid(message: string): never {
  throw new McpError("MCP_INVALID_ARGUMENT", message, { phase: "configure" });
}
