// The manager's use of the tool adapter: a server's tools/list adapted (names, byte caps,
// bounded schemas, tool count, duplicates, permission capped by the config's
// maxPermission and narrowed by a declared tool's own permission), kept per process for
// argument checks, and turned into the agent's ToolDefinition. Also the check of the
// manager's configuration, which uses the adapter's own name rule for server and tool names.

import { McpError as BaseMcpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import { resolveCallTimeout } from "../../../labs/33-mcp-lite/solution/src/options.ts";
import type { Tool } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";
import { check } from "../../../labs/33-mcp-lite/solution/src/validate.ts";
import { waitShared } from "./call-wait.ts";
import { checkOptions } from "./client-options.ts";
import { McpError } from "./errors.ts";
import type { McpManagerOptions, ServerConfig, ToolDeclaration, ToolDefinition } from "./manager-types.ts";
import { CATALOG_DESCRIPTION_BYTES, DEFAULT_MAX_PERMISSION } from "./manager-types.ts";
import type { CallOptions } from "./mcp-client.ts";
import type { ServerManager } from "./server-manager.ts";
import type { ServerSlot } from "./server-slot.ts";
import { adaptTools, capPermission, capText, PERMISSIONS, SLUG, type AdaptedTools, type Permission, type ToolDefinition as AdaptedTool } from "./tool-adapter.ts";

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
  const permissions: Record<string, Permission> = {};
  for (const tool of slot.config.tools) if (tool.permission !== undefined) permissions[tool.name] = tool.permission;
  const adapted = adaptTools(manager, listed, {
    serverName: slot.name,
    maxPermission: slot.config.maxPermission ?? DEFAULT_MAX_PERMISSION,
    permissions,
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
/** Every field a tool declaration may have (kept complete the same way). */
const TOOL_DECLARATION_KEYS = ["name", "description", "permission"] as const satisfies readonly (keyof ToolDeclaration)[];
/** (A compile error here names a ToolDeclaration field missing from TOOL_DECLARATION_KEYS.) */
export const TOOL_DECLARATION_KEYS_COMPLETE: Exclude<keyof ToolDeclaration, (typeof TOOL_DECLARATION_KEYS)[number]> extends never ? true : never = true;

// One server's config: the manager's own fields, then the client options with the client's
// own check (one rule, not two), so a bad option fails here, naming the server, instead of
// deep inside the first call.
function validateServer(name: string, config: ServerConfig): void {
  if (!SLUG.test(name)) invalid(`server name ${JSON.stringify(name)} must match ${SLUG}`);
  if (config === null || typeof config !== "object" || Array.isArray(config)) invalid(`servers.${name} must be a server config object`);
  // A misspelt field (`maxpermission`) would otherwise be dropped in silence, and the server
  // run with the default it meant to change.
  refuseUnknown(`servers.${name}`, config, SERVER_CONFIG_KEYS);
  if (!Array.isArray(config.tools)) invalid(`servers.${name}.tools must list the tools it may offer`);
  if (config.maxPermission !== undefined && !PERMISSIONS.includes(config.maxPermission)) {
    invalid(`servers.${name}.maxPermission must be one of ${PERMISSIONS.join(", ")}, got ${JSON.stringify(config.maxPermission)}`);
  }
  const seen = new Set<string>();
  config.tools.forEach((tool, index) => {
    validateTool(`servers.${name}.tools[${index}]`, tool, config.maxPermission);
    if (seen.has(tool.name)) invalid(`servers.${name}.tools: ${JSON.stringify(tool.name)} is declared twice`);
    seen.add(tool.name);
  });
  const { tools: _tools, maxPermission: _max, ...client } = config;
  try {
    checkOptions(client);
  } catch (error) {
    if (error instanceof McpError && error.code === "MCP_INVALID_ARGUMENT") invalid(`servers.${name}: ${error.message}`);
    throw error;
  }
}

// One declared tool: a slug name, an optional description, and an optional permission that
// only narrows its server's ceiling (a misspelt `permision` is refused, as it would otherwise
// leave the tool at the ceiling it meant to lower).
function validateTool(path: string, tool: ToolDeclaration, maxPermission: Permission | undefined): void {
  if (typeof tool?.name !== "string" || !SLUG.test(tool.name)) invalid(`${path}: every tool needs a name matching ${SLUG}`);
  refuseUnknown(path, tool, TOOL_DECLARATION_KEYS);
  if (tool.description !== undefined && typeof tool.description !== "string") invalid(`${path}.description must be a string`);
  if (tool.permission === undefined) return;
  if (!PERMISSIONS.includes(tool.permission)) invalid(`${path}.permission must be one of ${PERMISSIONS.join(", ")}, got ${JSON.stringify(tool.permission)}`);
  const ceiling = maxPermission ?? DEFAULT_MAX_PERMISSION;
  if (capPermission(tool.permission, ceiling) !== tool.permission) {
    const which = maxPermission === undefined ? " (the default)" : "";
    invalid(`${path}.permission "${tool.permission}" is above the server's maxPermission "${ceiling}"${which}; a tool's permission can only narrow it`);
  }
}

function refuseUnknown(path: string, value: object, known: readonly string[]): void {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) invalid(`${path} has unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => JSON.stringify(key)).join(", ")}`);
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
