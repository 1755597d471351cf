// Tool adapter: turns a server's tools/list into definitions an agent can register. Every
// field the server sent is untrusted data: names must be slugs, descriptions are capped in
// bytes, schemas are capped in depth and size and compiled by a real JSON Schema validator,
// the number of tools is capped, and a duplicate name refuses the whole list. Permission
// comes from configuration only: a server cannot raise it by what it writes about itself.

import type { ValidateFunction } from "ajv";
import { McpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import { isPlainObject, type Tool } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";
import { checkSchema, compileSchema } from "./tool-schema.ts";
import { decodeWholeCharacters } from "../../../labs/33-mcp-lite/solution/src/utf8.ts";
import { check, integerOption } from "../../../labs/33-mcp-lite/solution/src/validate.ts";
import type { CallOptions } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";

// Kept here too: callers imported them from this module before tool-schema.ts existed.
export { jsonDepth, MAX_PATTERN_LENGTH, riskyPattern } from "./tool-schema.ts";

/** Permissions from least to most capable. */
export const PERMISSIONS = ["read", "execute", "write"] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Default largest number of tools one server may offer. */
export const DEFAULT_MAX_TOOLS = 64;
/** Default largest description kept, in UTF-8 bytes (longer ones are cut). */
export const DEFAULT_MAX_DESCRIPTION_BYTES = 1024;
/** Default deepest nesting of objects and arrays in an inputSchema. */
export const DEFAULT_MAX_SCHEMA_DEPTH = 10;
/** Default largest serialized inputSchema, in bytes (16 KiB). */
export const DEFAULT_MAX_SCHEMA_BYTES = 16 * 1024;
// MCP's recommended tool-name alphabet; also used for server names in "server/tool".
export const SLUG = /^[A-Za-z0-9_-]{1,64}$/;

export interface ToolAdapterOptions {
  /** Slug naming the server; tool names become "server/tool" when `namespaced`. */
  serverName: string;
  /** The most a tool of this server may do, set by whoever configured the server. */
  maxPermission: Permission;
  /** Configured permission per tool name, capped at maxPermission. Default for others: maxPermission. */
  permissions?: Record<string, Permission>;
  /** Name tools "server/tool" (for combining servers). Default: true. */
  namespaced?: boolean;
  /** Default: DEFAULT_MAX_TOOLS. */
  maxTools?: number;
  /** Default: DEFAULT_MAX_DESCRIPTION_BYTES. */
  maxDescriptionBytes?: number;
  /** Default: DEFAULT_MAX_SCHEMA_DEPTH. */
  maxSchemaDepth?: number;
  /** Default: DEFAULT_MAX_SCHEMA_BYTES. */
  maxSchemaBytes?: number;
}

/** The part of McpClient the adapter needs. */
export interface ToolCaller {
  listTools(options?: CallOptions): Promise<Tool[]>;
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
}

export interface ToolDefinition {
  /** What the agent registers: "server/tool" or the bare tool name. */
  readonly name: string;
  readonly serverName: string;
  /** The name the server knows the tool by. */
  readonly remoteName: string;
  readonly description: string;
  readonly descriptionTruncated: boolean;
  /** A deep copy of the server's inputSchema. */
  readonly inputSchema: Record<string, unknown>;
  readonly permission: Permission;
  /** Validates arguments against inputSchema (nothing is sent when they fail), then calls. */
  call(args?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  /** Checks arguments without calling; returns the problems, empty when valid. */
  check(args: unknown): string[];
}

export interface RejectedTool {
  name: string;
  reason: string;
}

export interface AdaptedTools {
  tools: ToolDefinition[];
  /** Tools left out, each with why (bad name, bad schema, ...). */
  rejected: RejectedTool[];
}

// Adapts an already-fetched tools/list. Whole-list problems (too many tools, a duplicate
// name) throw MCP_PROTOCOL_ERROR; a single bad tool is left out and reported in `rejected`.
export function adaptTools(caller: ToolCaller, tools: unknown, options: ToolAdapterOptions): AdaptedTools {
  const config = resolveAdapterOptions(options);
  if (!Array.isArray(tools)) throw protocolError(config.serverName, "tools/list result has no tools array");
  if (tools.length > config.maxTools) {
    throw protocolError(config.serverName, `offers ${tools.length} tools, more than maxTools (${config.maxTools})`);
  }
  const seen = new Set<string>();
  for (const tool of tools) {
    const name = isPlainObject(tool) ? tool.name : undefined;
    if (typeof name !== "string") continue;
    if (seen.has(name)) throw protocolError(config.serverName, `tool name ${JSON.stringify(name.slice(0, 80))} appears twice`);
    seen.add(name);
  }

  const adapted: ToolDefinition[] = [];
  const rejected: RejectedTool[] = [];
  for (const [index, tool] of tools.entries()) {
    const outcome = adaptOne(caller, tool, index, config);
    if ("reason" in outcome) rejected.push(outcome);
    else adapted.push(outcome);
  }
  return { tools: adapted, rejected };
}

// Fetches tools/list through the client and adapts it.
export async function loadTools(client: ToolCaller, options: ToolAdapterOptions, call?: CallOptions): Promise<AdaptedTools> {
  return adaptTools(client, await client.listTools(call), options);
}

// Combines the tools of several servers into one registry; a name that appears twice
// (two servers with one name, or namespacing turned off) is refused, never shadowed.
export function combineTools(...sets: ToolDefinition[][]): Map<string, ToolDefinition> {
  const registry = new Map<string, ToolDefinition>();
  for (const tool of sets.flat()) {
    if (registry.has(tool.name)) {
      throw new McpError("MCP_INVALID_ARGUMENT", `tool name ${JSON.stringify(tool.name)} is offered twice`);
    }
    registry.set(tool.name, tool);
  }
  return registry;
}

/** The lower of two permissions. */
export function capPermission(wanted: Permission, max: Permission): Permission {
  return PERMISSIONS.indexOf(wanted) <= PERMISSIONS.indexOf(max) ? wanted : max;
}

type ResolvedAdapterOptions = Required<Omit<ToolAdapterOptions, "permissions">> & {
  permissions: Record<string, Permission>;
};

function resolveAdapterOptions(options: ToolAdapterOptions): ResolvedAdapterOptions {
  check(isPlainObject(options), "tool adapter options", "an object", options, "configure");
  const { serverName, maxPermission, permissions = {} } = options;
  check(typeof serverName === "string" && SLUG.test(serverName), "serverName", `a slug matching ${SLUG}`, serverName, "configure");
  const onePermission = `one of ${PERMISSIONS.join(", ")}`;
  check(PERMISSIONS.includes(maxPermission), "maxPermission", onePermission, maxPermission, "configure");
  for (const [tool, permission] of Object.entries(permissions)) {
    check(PERMISSIONS.includes(permission), `permissions.${tool}`, onePermission, permission, "configure");
  }
  const positive = (name: keyof ToolAdapterOptions, fallback: number) =>
    integerOption(name, options[name], fallback, { min: 1 }, "configure");
  return {
    serverName,
    maxPermission,
    permissions,
    namespaced: options.namespaced ?? true,
    maxTools: positive("maxTools", DEFAULT_MAX_TOOLS),
    maxDescriptionBytes: positive("maxDescriptionBytes", DEFAULT_MAX_DESCRIPTION_BYTES),
    maxSchemaDepth: positive("maxSchemaDepth", DEFAULT_MAX_SCHEMA_DEPTH),
    maxSchemaBytes: positive("maxSchemaBytes", DEFAULT_MAX_SCHEMA_BYTES),
  };
}

// One tool of the list: checked field by field, its schema compiled, or left out with why.
function adaptOne(caller: ToolCaller, tool: unknown, index: number, config: ResolvedAdapterOptions): ToolDefinition | RejectedTool {
  if (!isPlainObject(tool)) return { name: `#${index}`, reason: "not an object" };
  const { name, description } = tool;
  const label = typeof name === "string" ? name.slice(0, 80) : `#${index}`;
  const reject = (reason: string): RejectedTool => ({ name: label, reason });
  if (typeof name !== "string" || !SLUG.test(name)) return reject(`name must match ${SLUG}`);
  if (description !== undefined && typeof description !== "string") return reject("description must be a string");
  const schema = checkSchema(tool.inputSchema, config);
  if (typeof schema === "string") return reject(schema);
  const validate = compileSchema(schema);
  if (typeof validate === "string") return reject(validate);
  return defineTool(caller, name, description ?? "", schema, validate, config);
}

// The frozen definition an agent registers; its call() checks arguments before sending.
function defineTool(
  caller: ToolCaller,
  name: string,
  description: string,
  schema: Record<string, unknown>,
  validate: ValidateFunction,
  config: ResolvedAdapterOptions,
): ToolDefinition {
  const { text, truncated } = capText(description, config.maxDescriptionBytes);
  const permission = capPermission(config.permissions[name] ?? config.maxPermission, config.maxPermission);
  const registered = config.namespaced ? `${config.serverName}/${name}` : name;
  const checkArgs = (args: unknown): string[] => {
    if (validate(args)) return [];
    return (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "(arguments)"} ${e.message ?? "is invalid"}`);
  };
  return Object.freeze({
    name: registered,
    serverName: config.serverName,
    remoteName: name,
    description: text,
    descriptionTruncated: truncated,
    inputSchema: schema,
    permission,
    check: checkArgs,
    async call(args: Record<string, unknown> = {}, options?: CallOptions): Promise<unknown> {
      const problems = checkArgs(args);
      if (problems.length > 0) {
        const message = `${registered}: arguments do not match inputSchema: ${problems.join("; ")}`;
        throw new McpError("MCP_INVALID_ARGUMENT", message, { method: "tools/call", phase: "request" });
      }
      return caller.callTool(name, args, options);
    },
  });
}

// Cuts text to at most maxBytes of UTF-8 on a character boundary, and drops control
// characters other than newline and tab (they can hide text from a human reviewer).
export function capText(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
  const bytes = Buffer.from(clean, "utf8");
  if (bytes.length <= maxBytes) return { text: clean, truncated: false };
  return { text: decodeWholeCharacters(bytes.subarray(0, maxBytes), false), truncated: true };
}

// A whole-list problem of one server's tools/list.
function protocolError(serverName: string, reason: string): McpError {
  return new McpError("MCP_PROTOCOL_ERROR", `server ${serverName}: ${reason}`, { method: "tools/list", phase: "request" });
}
