// The errors the client builds, one function each, so every path that ends a request
// says the same things the same way.

import { describeReason, McpError, type McpErrorCode, type McpErrorDetails } from "./errors.ts";
import type { PendingRecord } from "./pending.ts";
import type { ExitInfo } from "./server-process.ts";

// Builds a per-request error that names the request it ended. Unless the server answered
// (MCP_ERROR), it also says whether the server ever received the request: a written request
// that ended without an answer may have run ("unknown"), and is never replayed.
export function errorWithContext(code: McpErrorCode, message: string, record: PendingRecord, details: McpErrorDetails = {}): McpError {
  return new McpError(code, `${record.method} (id ${record.id}): ${message}`, {
    ...details,
    method: record.method,
    requestId: record.id,
    outcome: code === "MCP_ERROR" ? undefined : record.written ? "unknown" : "not-sent",
  });
}

// A call whose signal was aborted before anything was registered or written.
export function abortedBeforeStart(method: string, reason: unknown): McpError {
  // Stryker disable next-line ObjectLiteral: §1 names a cause only for MCP_SPAWN_FAILED; method and phase are context
  return new McpError("MCP_ABORTED", `${method}: aborted before it was sent: ${describeReason(reason)}`, {
    method,
    cause: reason,
    phase: "request",
  });
}

export function notInitialized(method: string): McpError {
  return new McpError("MCP_NOT_INITIALIZED", `${method}: call initialize() first (no initialized server)`, {
    method,
    phase: "request",
  });
}

export function clientClosed(method: string): McpError {
  return new McpError("CLIENT_CLOSED", `${method}: the client was closed`, { method, phase: "close" });
}

export function spawnFailed(executable: string, cause: unknown): McpError {
  // Stryker disable next-line LogicalOperator,StringLiteral: the code only words the message (§1's field for it is cause, kept whole)
  const code = (cause as NodeJS.ErrnoException).code ?? "unknown";
  return new McpError("MCP_SPAWN_FAILED", `could not start ${JSON.stringify(executable)}: ${code}`, { cause, phase: "spawn" });
}

// What an unexpected exit tells, for the client and for each request it ended.
export function exitDetails(info: ExitInfo, stderr: { text: string; truncated: boolean }): McpErrorDetails {
  return {
    exitCode: info.exitCode,
    signal: info.signal,
    stderr: stderr.text,
    stderrTruncated: stderr.truncated,
    phase: "transport",
  };
}

// Serializes params before any id or record exists, so a circular or BigInt argument
// fails with MCP_INVALID_ARGUMENT and leaves nothing behind.
export function serializeParams(params: Record<string, unknown>): string {
  try {
    return JSON.stringify(params);
  } catch (cause) {
    // Stryker disable next-line ObjectLiteral: §1 names a cause only for MCP_SPAWN_FAILED; phase is context
    throw new McpError("MCP_INVALID_ARGUMENT", `arguments are not JSON-serializable: ${(cause as Error).message}`, {
      cause,
      phase: "request",
    });
  }
}
