// The manager's use of the tool adapter: a server's tools/list adapted (names, byte caps,
// bounded schemas, tool count, duplicates, permission capped by the config's
// maxPermission), kept per process for argument checks, and turned into the agent's
// ToolDefinition. Also the check of the manager's configuration, which uses the adapter's
// own name rule for server and tool names.

import { McpError as BaseMcpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import { resolveCallTimeout } from "../../../labs/33-mcp-lite/solution/src/options.ts";
import type { Tool } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";
import { check } from "../../../labs/33-mcp-lite/solution/src/validate.ts";
import { waitShared } from "./call-wait.ts";
import { checkOptions } from "./client-options.ts";
import { McpError } from "./errors.ts";
import type { McpManagerOptions, ServerConfig, ToolDefinition } from "./manager-types.ts";
import { CATALOG_DESCRIPTION_BYTES, DEFAULT_MAX_PERMISSION } from "./manager-types.ts";
import type { CallOptions } from "./mcp-client.ts";
import type { ServerManager } from "./server-manager.ts";
import type { ServerSlot } from "./server-slot.ts";
import { adaptTools, capText, PERMISSIONS, SLUG, type AdaptedTools, type ToolDefinition as AdaptedTool } from "./tool-adapter.ts";

// A fresh tools/list of the server, adapted and kept for the calls of this process.
// Concurrent callers share one listing in flight, and callers that waited for the server's
// start share the listing of its health check, so ten cold calls cost one tools/list, not
// eleven. Each caller waits with its own signal and deadline; a failed listing rejects every
// caller waiting on it and is not kept. A call with its own budget lists for itself: what a
// listing costs is charged to the budget of the call that made it.
export async function listAdapted(slot: ServerSlot, manager: ServerManager, options: CallOptions, method = "tools/list"): Promise<AdaptedTools> {
  if (options?.budget !== undefined) return manager.listTools(options).then((listed) => adaptListed(slot, manager, listed));
  checkCallOptions(options);
  try {
    return await waitShared(method, options, () => sharedListing(slot, manager), "while its server listed its tools");
  } catch (error) {
    // This call's deadline passed on a listing it did not send: as after a call of the
    // server that timed out, the server is pinged at once (the listing goes on).
    if (error instanceof BaseMcpError && error.code === "MCP_TIMEOUT") manager.suspect();
    throw error;
  }
}

// The listing in flight for this ServerManager, or a new one.
function sharedListing(slot: ServerSlot, manager: ServerManager): Promise<AdaptedTools> {
  if (slot.listing?.manager === manager) return slot.listing.promise;
  const promise = manager.listToolsAfterStart({}).then((listed) => adaptListed(slot, manager, listed));
  const listing = { manager, promise };
  slot.listing = listing;
  const done = () => {
    if (slot.listing === listing) slot.listing = undefined;
  };
  promise.then(done, done);
  return promise;
}

// The call options the client would refuse, refused before the caller joins a listing it
// does not send itself.
function checkCallOptions(options: CallOptions): void {
  check(options !== null && typeof options === "object", "call options", "an object", options, "request");
  check(options.signal === undefined || options.signal instanceof AbortSignal, "signal", "an AbortSignal", options.signal, "request");
  if (options.timeoutMs !== undefined) resolveCallTimeout(options.timeoutMs, 1);
}

function adaptListed(slot: ServerSlot, manager: ServerManager, listed: Tool[]): AdaptedTools {
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
  for (const [name, config] of Object.entries(options.servers)) validateServer(name, config);
  if (options.runId !== undefined && (typeof options.runId !== "string" || options.runId === "")) invalid("runId must be a non-empty string");
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

/** Every field a ServerConfig may have (the type check below keeps the list complete). */
const SERVER_CONFIG_KEYS = [
  "tools", "maxPermission", "secrets", "runId", "onTrace", "budget", "redactResults",
  "executable", "args", "cwd", "env", "timeoutMs", "closeTimeoutMs", "maxLineBytes", "maxStderrBytes", "maxPending",
  "maxRequestBytes", "maxNotificationsPerSecond", "maxNotificationBytesPerSecond", "onNotification", "clientInfo",
] as const satisfies readonly (keyof ServerConfig)[];
/** (A compile error here names a ServerConfig field missing from SERVER_CONFIG_KEYS.) */
export const SERVER_CONFIG_KEYS_COMPLETE: Exclude<keyof ServerConfig, (typeof SERVER_CONFIG_KEYS)[number]> extends never ? true : never = true;

// One server's config: the manager's own fields, then the client options with the client's
// own check (one rule, not two), so a bad option fails here, naming the server, instead of
// deep inside the first call.
function validateServer(name: string, config: ServerConfig): void {
  if (!SLUG.test(name)) invalid(`server name ${JSON.stringify(name)} must match ${SLUG}`);
  if (config === null || typeof config !== "object" || Array.isArray(config)) invalid(`servers.${name} must be a server config object`);
  // A misspelt field (`maxpermission`) would otherwise be dropped in silence, and the server
  // run with the default it meant to change.
  const unknown = Object.keys(config).filter((key) => !(SERVER_CONFIG_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) invalid(`servers.${name} has unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => JSON.stringify(key)).join(", ")}`);
  if (!Array.isArray(config.tools)) invalid(`servers.${name}.tools must list the tools it may offer`);
  const seen = new Set<string>();
  config.tools.forEach((tool, index) => {
    if (typeof tool?.name !== "string" || !SLUG.test(tool.name)) invalid(`servers.${name}.tools[${index}]: every tool needs a name matching ${SLUG}`);
    if (seen.has(tool.name)) invalid(`servers.${name}.tools: ${JSON.stringify(tool.name)} is declared twice`);
    if (tool.description !== undefined && typeof tool.description !== "string") invalid(`servers.${name}.tools[${index}].description must be a string`);
    seen.add(tool.name);
  });
  if (config.maxPermission !== undefined && !PERMISSIONS.includes(config.maxPermission)) {
    invalid(`servers.${name}.maxPermission must be one of ${PERMISSIONS.join(", ")}, got ${JSON.stringify(config.maxPermission)}`);
  }
  const { tools: _tools, maxPermission: _max, ...client } = config;
  try {
    checkOptions(client);
  } catch (error) {
    if (error instanceof McpError && error.code === "MCP_INVALID_ARGUMENT") invalid(`servers.${name}: ${error.message}`);
    throw error;
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
