// The package's McpError: the reference client's error (same codes, same fields) plus the
// reason a call was stopped and report(), the fault report the seed asks for. It never
// carries tool arguments or content; its text is redacted before it is built.

import {
  McpError as BaseMcpError,
  type McpErrorCode,
  type McpErrorDetails,
  type McpErrorPhase,
  type McpRequestOutcome,
} from "../../../labs/33-mcp-lite/solution/src/errors.ts";

export type { McpErrorCode, McpErrorPhase, McpRequestOutcome } from "../../../labs/33-mcp-lite/solution/src/errors.ts";

/**
 * Why a call was stopped rather than answered: the agent's user cancelled, a budget ran
 * out, the agent (or manager) is shutting down, or the server process failed. The first
 * three are deliberate and are not tool failures.
 */
export type McpStopReason = "user" | "budget" | "shutdown" | "process";

export const STOP_REASONS: readonly McpStopReason[] = ["user", "budget", "shutdown", "process"];

// An abort reason that says why: `controller.abort(new McpCancel("budget"))`.
export class McpCancel extends Error {
  readonly reason: McpStopReason;

  constructor(reason: McpStopReason, message = `cancelled: ${reason}`) {
    super(message);
    this.reason = reason;
  }
}
Object.defineProperty(McpCancel.prototype, "name", { value: "McpCancel", writable: true, configurable: true });

// Reads a stop reason out of an AbortSignal's reason. A plain abort() is the user's; a
// deadline (AbortSignal.timeout) is a time budget running out.
export function stopReasonOf(abortReason: unknown): McpStopReason {
  if (abortReason instanceof McpCancel) return abortReason.reason;
  if (typeof abortReason === "string" && (STOP_REASONS as readonly string[]).includes(abortReason)) {
    return abortReason as McpStopReason;
  }
  if (abortReason instanceof Error && abortReason.name === "TimeoutError") return "budget";
  return "user";
}

// The stop reason of an error the reference client produced, if it was a stop at all.
export function stopReasonOfError(error: BaseMcpError): McpStopReason | undefined {
  switch (error.code) {
    case "MCP_ABORTED":
      return stopReasonOf(error.cause);
    case "CLIENT_CLOSED":
      return "shutdown";
    case "MCP_PROCESS_EXIT":
    case "MCP_SPAWN_FAILED":
      return "process";
    case "MCP_PROTOCOL_ERROR":
      return error.phase === "transport" || error.phase === "handshake" ? "process" : undefined;
    default:
      return undefined;
  }
}

/** The seed's fault report: enough to place a failure in the lifecycle, no business data. */
export interface McpFaultReport {
  code: McpErrorCode;
  /** Redacted, like every text here. */
  message: string;
  phase: McpErrorPhase | null;
  method: string | null;
  requestId: number | null;
  reason: McpStopReason | null;
  outcome: McpRequestOutcome | null;
  durationMs: number | null;
  timeoutMs: number | null;
  remoteCode: number | null;
  runId: string;
  server: {
    /** The executable's file name (no directories: they may name a user or a repository). */
    executable: string;
    /** sha256 of the normalized configuration and the executable's content. */
    hash: string;
    instanceId: string | null;
    pid: number | null;
    name: string | null;
    version: string | null;
  };
  protocolVersion: string | null;
  exit: { exitCode: number | null; signal: string | null } | null;
  stderr: { tail: string; truncated: boolean };
}

/** What the client knows about where an error happened; filled in when it is built. */
export interface FaultContext {
  runId: string;
  executable: string;
  serverHash: () => string;
  instanceId?: string;
  pid?: number;
  serverInfo?: { name: string; version: string };
  protocolVersion?: string;
  durationMs?: number;
  exit?: { exitCode: number | null; signal: string | null };
  stderr: { tail: string; truncated: boolean };
}

/** Why a server refused to start now: backing off after failures, or quarantined. */
export type McpAvailability = "backoff" | "quarantined";

export interface ProductionDetails extends McpErrorDetails {
  reason?: McpStopReason;
  availability?: McpAvailability;
  retryInMs?: number;
  failures?: number;
}

export class McpError extends BaseMcpError {
  /** Only ever a stop reason; a server's availability has its own field. */
  declare readonly reason?: McpStopReason;
  /** MCP_NOT_INITIALIZED from a manager: the server is backing off or quarantined. */
  declare readonly availability?: McpAvailability;
  /** With availability "backoff": ms until a start is allowed again. */
  declare readonly retryInMs?: number;
  /** With availability: the server's consecutive failures. */
  declare readonly failures?: number;
  declare private readonly context: FaultContext | undefined;

  constructor(code: McpErrorCode, message: string, details: ProductionDetails = {}, context?: FaultContext) {
    super(code, message, details);
    Object.defineProperty(this, "context", { value: context, enumerable: false, writable: true });
  }

  // The fault report as a plain JSON object.
  report(): McpFaultReport {
    const context = this.context;
    const exit =
      this.exitCode !== undefined || this.signal !== undefined
        ? { exitCode: this.exitCode ?? null, signal: this.signal ?? null }
        : (context?.exit ?? null);
    return {
      code: this.code,
      message: this.message,
      phase: this.phase ?? null,
      method: this.method ?? null,
      requestId: this.requestId ?? null,
      reason: this.reason ?? null,
      outcome: this.outcome ?? null,
      durationMs: context?.durationMs ?? null,
      timeoutMs: this.timeoutMs ?? null,
      remoteCode: this.remoteCode ?? null,
      runId: context?.runId ?? "",
      server: {
        executable: context?.executable ?? "",
        hash: context ? context.serverHash() : "",
        instanceId: context?.instanceId ?? null,
        pid: context?.pid ?? null,
        name: context?.serverInfo?.name ?? null,
        version: context?.serverInfo?.version ?? null,
      },
      protocolVersion: context?.protocolVersion ?? null,
      exit,
      stderr: context ? { ...context.stderr } : { tail: this.stderr ?? "", truncated: this.stderrTruncated ?? false },
    };
  }
}
Object.defineProperty(McpError.prototype, "name", { value: "McpError", writable: true, configurable: true });
