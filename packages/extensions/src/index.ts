// @coding-agent/extensions: the production MCP layer of the course project.
export * from "./mcp-client.ts";
export * from "./manager.ts";
export { Redactor } from "./redact.ts";
export { serverHash } from "./server-hash.ts";
export {
  ServerManager, ServerUnavailableError, DEFAULT_BACKOFF_FACTOR, DEFAULT_BACKOFF_INITIAL_MS, DEFAULT_BACKOFF_MAX_MS,
  DEFAULT_HEALTHY_AFTER_MS, DEFAULT_HEARTBEAT_TIMEOUT_MS, DEFAULT_MAX_FAILURES,
  type Availability, type ClientEvents, type ManagedClient, type ManagerState, type ServerManagerOptions,
} from "./server-manager.ts";
export {
  adaptTools, capPermission, capText, combineTools, loadTools, DEFAULT_MAX_DESCRIPTION_BYTES, DEFAULT_MAX_SCHEMA_BYTES,
  DEFAULT_MAX_SCHEMA_DEPTH, DEFAULT_MAX_TOOLS, PERMISSIONS,
  type AdaptedTools, type RejectedTool, type ToolAdapterOptions, type ToolCaller, type ToolDefinition as AdaptedToolDefinition,
} from "./tool-adapter.ts";
export { checkSchema, compileSchema, jsonDepth, riskyPattern, MAX_PATTERN_LENGTH, type SchemaLimits } from "./tool-schema.ts";
