// TODO(扩展: 工具适配器): 把 tools/list 变成 Agent 可注册的工具定义，并把服务器给的一切当作
// 不可信数据：name 必须是 slug、description 按 UTF-8 字节截断、inputSchema 限制深度与大小并用
// JSON Schema 校验器（ajv）编译、工具总数有上限、重名拒绝；权限只来自配置，且不超过该服务器的
// 最大权限；调用前先用 inputSchema 校验参数，不合法就什么都不发送。参考答案见 solution。
import { todo } from "./todo.ts";
import type { Tool } from "./protocol.ts";
import type { CallOptions } from "./mcp-client.ts";

export const PERMISSIONS = ["read", "execute", "write"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const DEFAULT_MAX_TOOLS = 64;
export const DEFAULT_MAX_DESCRIPTION_BYTES = 1024;
export const DEFAULT_MAX_SCHEMA_DEPTH = 10;
export const DEFAULT_MAX_SCHEMA_BYTES = 16 * 1024;
export const MAX_PATTERN_LENGTH = 256;

export interface ToolAdapterOptions {
  serverName: string;
  maxPermission: Permission;
  permissions?: Record<string, Permission>;
  namespaced?: boolean;
  maxTools?: number;
  maxDescriptionBytes?: number;
  maxSchemaDepth?: number;
  maxSchemaBytes?: number;
}

export interface ToolCaller {
  listTools(options?: CallOptions): Promise<Tool[]>;
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
}

export interface ToolDefinition {
  readonly name: string;
  readonly serverName: string;
  readonly remoteName: string;
  readonly description: string;
  readonly descriptionTruncated: boolean;
  readonly inputSchema: Record<string, unknown>;
  readonly permission: Permission;
  call(args?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  check(args: unknown): string[];
}

export interface RejectedTool {
  name: string;
  reason: string;
}

export interface AdaptedTools {
  tools: ToolDefinition[];
  rejected: RejectedTool[];
}

export function adaptTools(_caller: ToolCaller, _tools: unknown, _options: ToolAdapterOptions): AdaptedTools {
  return todo("扩展: 工具适配器 —— slug、字节/深度/数量上限、重名拒绝、ajv 校验参数");
}

export async function loadTools(_client: ToolCaller, _options: ToolAdapterOptions, _call?: CallOptions): Promise<AdaptedTools> {
  return todo("扩展: 工具适配器 —— listTools 之后交给 adaptTools");
}

export function combineTools(..._sets: ToolDefinition[][]): Map<string, ToolDefinition> {
  return todo("扩展: 工具适配器 —— 多服务器合并，server/tool 命名空间，重名拒绝");
}

export function capPermission(_wanted: Permission, _max: Permission): Permission {
  return todo("扩展: 工具适配器 —— 权限取两者中较低的一个");
}

export function jsonDepth(_value: unknown, _limit = Infinity): number {
  return todo("扩展: 工具适配器 —— 计算 schema 嵌套深度（不要递归）");
}

export function riskyPattern(_schema: unknown): string | undefined {
  return todo("扩展: 工具适配器 —— 拒绝可能灾难性回溯的正则（嵌套量词、反向引用、过长）");
}

export function capText(_text: string, _maxBytes: number): { text: string; truncated: boolean } {
  return todo("扩展: 工具适配器 —— 按 UTF-8 字节截断描述，不切坏字符");
}
