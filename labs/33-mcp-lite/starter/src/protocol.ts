// JSON-RPC 2.0 message shapes (given) and the validation of one incoming line (TODO).
import { todo } from "./todo.ts";

export interface InitializeResult {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string; [key: string]: unknown };
  instructions?: string;
}

export interface Tool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  [key: string]: unknown;
}

export interface RemoteError {
  code: number;
  message: string;
  data?: unknown;
}

export type ServerRequestId = string | number;

export type Incoming =
  | { kind: "response"; id: unknown; result: unknown }
  | { kind: "error-response"; id: unknown; error: RemoteError }
  | { kind: "request"; id: ServerRequestId; method: string; params: unknown }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "invalid"; reason: string };

export function classifyLine(_line: string): Incoming {
  return todo("protocol: 校验对象、jsonrpc、整数 id，以及 result/error 恰有一个");
}

export function isRequestId(_id: unknown): _id is number {
  return todo('protocol: 只有安全整数才是请求 id（"3" 不是 3）');
}

export function checkInitializeResult(_result: unknown): string | undefined {
  return todo("protocol: 校验 protocolVersion、capabilities 与 serverInfo");
}

export function checkToolsResult(_result: unknown): { tools: Tool[] } | { reason: string } {
  return todo("protocol: 校验 tools 数组与名字唯一");
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function preview(line: string, max = 120): string {
  return JSON.stringify(line.length > max ? `${line.slice(0, max)}…` : line);
}
