// 给定文件（GIVEN）：与参考答案相同，不需要修改，也没有 TODO。直接 import 使用即可。
// Given file: the same as the reference solution's; nothing to do here.
// Client options: their types, their defaults (stated once, here) and their validation,
// which runs in the constructor before anything is spawned or written.

import { check, integerOption } from "./validate.ts";

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
  check(isObject(options), "options", "an object", options, CONFIGURE);
  const { executable, args = [], cwd, env = {} } = options;
  checkProgram(executable, args);
  check(cwd === undefined || (typeof cwd === "string" && cwd !== ""), "cwd", "a non-empty string", cwd, CONFIGURE);
  check(isObject(env) && !Array.isArray(env), "env", "an object of strings", env, CONFIGURE);
  for (const [key, value] of Object.entries(env)) check(typeof value === "string", `env.${key}`, "a string", value, CONFIGURE);
  const { onNotification } = options;
  check(onNotification === undefined || typeof onNotification === "function", "onNotification", "a function", onNotification, CONFIGURE);
  const clientInfo = options.clientInfo ?? { name: "lab33-mcp-lite-client", version: "1.0.0" };
  const infoOk = typeof clientInfo.name === "string" && typeof clientInfo.version === "string";
  check(infoOk, "clientInfo", "{ name: string, version: string }", clientInfo, CONFIGURE);
  return {
    executable,
    args: [...args],
    cwd,
    env: { ...env },
    ...resolveLimits(options),
    onNotification,
    clientInfo: { name: clientInfo.name, version: clientInfo.version },
  };
}

// Validates a per-call deadline override.
export function resolveCallTimeout(value: unknown, fallback: number): number {
  return integerOption("timeoutMs", value, fallback, { min: 1, max: MAX_TIMER_MS }, "request");
}

const CONFIGURE = "configure";

// The program and its arguments: strings without NUL bytes, passed to spawn verbatim.
function checkProgram(executable: unknown, args: unknown): asserts executable is string {
  const program = "a non-empty string (a program path, not a shell command)";
  check(typeof executable === "string" && executable.trim() !== "", "executable", program, executable, CONFIGURE);
  check(!executable.includes("\0"), "executable", "free of NUL bytes", executable, CONFIGURE);
  check(Array.isArray(args), "args", "an array of strings", args, CONFIGURE);
  args.forEach((arg: unknown, index) => {
    check(typeof arg === "string", `args[${index}]`, "a string", arg, CONFIGURE);
    check(!arg.includes("\0"), `args[${index}]`, "free of NUL bytes", arg, CONFIGURE);
  });
}

// The numeric limits, each a checked integer with its default.
function resolveLimits(options: McpClientOptions) {
  const limit = (name: keyof McpClientOptions, fallback: number, max: number, min: 0 | 1 = 1) =>
    integerOption(name, options[name], fallback, { min, max }, CONFIGURE);
  return {
    timeoutMs: limit("timeoutMs", DEFAULT_TIMEOUT_MS, MAX_TIMER_MS),
    closeTimeoutMs: limit("closeTimeoutMs", DEFAULT_CLOSE_TIMEOUT_MS, MAX_TIMER_MS),
    maxLineBytes: limit("maxLineBytes", DEFAULT_MAX_LINE_BYTES, 2 ** 30),
    maxStderrBytes: limit("maxStderrBytes", DEFAULT_MAX_STDERR_BYTES, 2 ** 30, 0),
    maxPending: limit("maxPending", DEFAULT_MAX_PENDING, 1_000_000),
    maxRequestBytes: limit("maxRequestBytes", DEFAULT_MAX_REQUEST_BYTES, 2 ** 30),
    maxNotificationsPerSecond: limit("maxNotificationsPerSecond", DEFAULT_MAX_NOTIFICATIONS_PER_SECOND, 1_000_000_000),
    maxNotificationBytesPerSecond: limit("maxNotificationBytesPerSecond", DEFAULT_MAX_NOTIFICATION_BYTES_PER_SECOND, 2 ** 40),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object";
}
