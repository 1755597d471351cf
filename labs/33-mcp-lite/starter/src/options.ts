// 给定文件（GIVEN）：与参考答案相同，不需要修改，也没有 TODO。直接 import 使用即可。
// Given file: the same as the reference solution's; nothing to do here.
// Client options: their types, their defaults (stated once, here) and their validation,
// which runs in the constructor before anything is spawned or written.

import { McpError } from "./errors.ts";

/** Default per-request deadline, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Default grace between SIGTERM and SIGKILL in close(), in milliseconds. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 2_000;
/** Default largest stdout line accepted, in bytes (1 MiB). */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;
/** Default stderr bytes kept, in bytes (64 KiB). */
export const DEFAULT_MAX_STDERR_BYTES = 64 * 1024;
/** Default number of requests in flight at once. */
export const DEFAULT_MAX_PENDING = 256;
/** Default largest serialized request (params included), in bytes (16 MiB). */
export const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;
/** Default server notifications accepted per second before the server is stopped. */
export const DEFAULT_MAX_NOTIFICATIONS_PER_SECOND = 1_000;
/** Default bytes of server notifications (and server requests) accepted per second (1 MiB). */
export const DEFAULT_MAX_NOTIFICATION_BYTES_PER_SECOND = 1024 * 1024;

/** Protocol versions this client speaks, newest first; the first is requested. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ["2025-06-18", "2025-03-26", "2024-11-05"];

export interface ServerNotification {
  method: string;
  params?: unknown;
}

export interface McpClientOptions {
  /** Program to start; non-empty. Started with spawn(executable, args, { shell: false }). */
  executable: string;
  /** Arguments, each a string, passed through verbatim. Default: []. */
  args?: string[];
  /** Working directory of the server. Default: the client's cwd. */
  cwd?: string;
  /** Variables added on top of the allowlist (PATH plus what the platform needs). */
  env?: Record<string, string>;
  /** Default per-request deadline in ms; positive integer. Default: 30_000. */
  timeoutMs?: number;
  /** Grace in ms between SIGTERM and SIGKILL in close(). Default: 2_000. */
  closeTimeoutMs?: number;
  /** Largest stdout line accepted, in bytes. Default: 1 MiB. */
  maxLineBytes?: number;
  /** Stderr bytes kept (the tail), in bytes. Default: 64 KiB. */
  maxStderrBytes?: number;
  /** Requests in flight at once. Default: 256. */
  maxPending?: number;
  /** Largest serialized request in bytes; bigger calls fail before any write. Default: 16 MiB. */
  maxRequestBytes?: number;
  /** Server notifications accepted per second; more is a protocol fault. Default: 1_000. */
  maxNotificationsPerSecond?: number;
  /** Bytes of server notifications and server requests accepted per second; more is a protocol fault. Default: 1 MiB. */
  maxNotificationBytesPerSecond?: number;
  /** Receives the notifications the client accepts: progress for a live request, log messages if the server declared logging, tools/list_changed if it declared tools.listChanged. */
  onNotification?: (notification: ServerNotification) => void;
  /** Product name and version sent as clientInfo. Default: lab33-mcp-lite-client 1.0.0. */
  clientInfo?: { name: string; version: string };
}

export interface ResolvedOptions {
  executable: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  timeoutMs: number;
  closeTimeoutMs: number;
  maxLineBytes: number;
  maxStderrBytes: number;
  maxPending: number;
  maxRequestBytes: number;
  maxNotificationsPerSecond: number;
  maxNotificationBytesPerSecond: number;
  onNotification: ((notification: ServerNotification) => void) | undefined;
  clientInfo: { name: string; version: string };
}

// The largest delay setTimeout honours; a bigger one fires at once.
const MAX_TIMER_MS = 2_147_483_647;

// Validates every option and fills in defaults; throws MCP_INVALID_ARGUMENT naming the
// first bad option.
export function resolveOptions(options: McpClientOptions): ResolvedOptions {
  if (options === null || typeof options !== "object") invalid("options must be an object");
  const { executable, args = [], cwd, env = {} } = options;
  if (typeof executable !== "string" || executable.trim() === "") {
    invalid("executable must be a non-empty string (a program path, not a shell command)");
  }
  if (executable.includes("\0")) invalid("executable must not contain NUL bytes");
  if (!Array.isArray(args)) invalid("args must be an array of strings");
  args.forEach((arg, index) => {
    if (typeof arg !== "string") invalid(`args[${index}] must be a string, got ${typeof arg}`);
    if (arg.includes("\0")) invalid(`args[${index}] must not contain NUL bytes`);
  });
  if (cwd !== undefined && (typeof cwd !== "string" || cwd === "")) invalid("cwd must be a non-empty string");
  if (env === null || typeof env !== "object" || Array.isArray(env)) invalid("env must be an object of strings");
  for (const [key, value] of Object.entries(env)) {
    if (typeof value !== "string") invalid(`env.${key} must be a string`);
  }
  if (options.onNotification !== undefined && typeof options.onNotification !== "function") {
    invalid("onNotification must be a function");
  }
  const clientInfo = options.clientInfo ?? { name: "lab33-mcp-lite-client", version: "1.0.0" };
  if (typeof clientInfo?.name !== "string" || typeof clientInfo.version !== "string") {
    invalid("clientInfo must be { name: string, version: string }");
  }
  return {
    executable,
    args: [...args],
    cwd,
    env: { ...env },
    timeoutMs: positiveInteger("timeoutMs", options.timeoutMs, DEFAULT_TIMEOUT_MS, MAX_TIMER_MS),
    closeTimeoutMs: positiveInteger("closeTimeoutMs", options.closeTimeoutMs, DEFAULT_CLOSE_TIMEOUT_MS, MAX_TIMER_MS),
    maxLineBytes: positiveInteger("maxLineBytes", options.maxLineBytes, DEFAULT_MAX_LINE_BYTES, 2 ** 30),
    maxStderrBytes: nonNegativeInteger("maxStderrBytes", options.maxStderrBytes, DEFAULT_MAX_STDERR_BYTES, 2 ** 30),
    maxPending: positiveInteger("maxPending", options.maxPending, DEFAULT_MAX_PENDING, 1_000_000),
    maxRequestBytes: positiveInteger("maxRequestBytes", options.maxRequestBytes, DEFAULT_MAX_REQUEST_BYTES, 2 ** 30),
    maxNotificationsPerSecond: positiveInteger(
      "maxNotificationsPerSecond",
      options.maxNotificationsPerSecond,
      DEFAULT_MAX_NOTIFICATIONS_PER_SECOND,
      1_000_000_000,
    ),
    maxNotificationBytesPerSecond: positiveInteger(
      "maxNotificationBytesPerSecond",
      options.maxNotificationBytesPerSecond,
      DEFAULT_MAX_NOTIFICATION_BYTES_PER_SECOND,
      2 ** 40,
    ),
    onNotification: options.onNotification,
    clientInfo: { name: clientInfo.name, version: clientInfo.version },
  };
}

// Validates a per-call deadline override.
export function resolveCallTimeout(value: unknown, fallback: number): number {
  return positiveInteger("timeoutMs", value, fallback, MAX_TIMER_MS);
}

function positiveInteger(name: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0 || value > max) {
    invalid(`${name} must be a positive integer no larger than ${max}, got ${String(value)}`);
  }
  return value;
}

function nonNegativeInteger(name: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > max) {
    invalid(`${name} must be an integer from 0 to ${max}, got ${String(value)}`);
  }
  return value;
}

function invalid(message: string): never {
  throw new McpError("MCP_INVALID_ARGUMENT", message, { phase: "request" });
}
