// @coding-agent/extensions: the production MCP layer of the course project.
export * from "./mcp-client.ts";
export * from "./manager.ts";
export { Redactor } from "./redact.ts";
export { serverHash } from "./server-hash.ts";
