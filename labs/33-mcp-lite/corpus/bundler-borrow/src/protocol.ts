// 给定文件（GIVEN）：不需要修改，也没有 TODO。直接 import 使用即可。
// Given file: nothing to do here.
// JSON-RPC 2.0 message shapes the client reads and returns, and two small helpers.

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

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A line shortened for an error message, quoted. */
export function preview(line: string, max = 120): string {
  return JSON.stringify(line.length > max ? `${line.slice(0, max)}…` : line);
}
